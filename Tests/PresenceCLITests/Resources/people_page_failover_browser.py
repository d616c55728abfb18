"""The people page behind nginx when its replica dies and the next one lags (chromium through selenium).

Usage: people_page_failover_browser.py BASE_URL REPLICAS

REPLICAS is a comma-separated list of HTTP_PORT:FEED_PORT:PID, one per replica behind the balancer at BASE_URL.
Every replica holds alice's older status. The page opens through the balancer; the replica its change stream
went to (the one with a stream open) alone gets alice's newer status, and the page shows it. That replica is
killed: the page reconnects through the balancer to another, whose snapshot still holds the older status. The
page must keep the newer one, come back live (a change fed to the others shows), and show a change newer than
both. Carol and a dozen visitors are fed to the dying replica alone: the next replica's snapshot leaves them out,
and the page must not keep their statuses but show what the service answers for them now (unknown), though the
replicas take fewer JIDs per request than the page first asks for (`--http-max-batch 5`). Every replica also holds a crowd of 2,000 people, and rounds of changes to a tenth of them are fed to the
surviving replicas from the moment of the kill: across the failover's new snapshot, the page must list everyone
once and end on each person's last change. Exits 0 when every check holds; otherwise prints what failed and
exits 1.
"""
import json
import os
import signal
import socket
import sys
import threading
import time
import urllib.request

from chromium_browser import chromium
from selenium.webdriver.support.ui import WebDriverWait

base = sys.argv[1]
replicas = [tuple(int(part) for part in entry.split(":")) for entry in sys.argv[2].split(",")]
alice, bob = "alice@engineering.example.com", "bob@sales.example.com"
carol = "carol@engineering.example.com"
visitors = [f"visitor{i}@engineering.example.com" for i in range(12)]
header = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>"


def feed(feed_port, text):
    with socket.create_connection(("127.0.0.1", feed_port)) as connection:
        connection.sendall((header + text).encode())
        time.sleep(0.2)


def presence(jid, status, stamp):
    return (f"<presence from='{jid}/desk'><status>{status}</status>"
            f"<delay xmlns='urn:xmpp:delay' stamp='{stamp}'/></presence>")


def stats(http_port):
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/v1/stats", timeout=5) as response:
        return json.load(response)


def status_of(driver, jid):
    return driver.execute_script(
        "const row = document.querySelector(`#rows .row.person[data-jid='${arguments[0]}']`);"
        "return row && row.querySelector('.status').textContent;", jid)


crowd = [f"person{i}@sales.example.com" for i in range(2000)]
changed = crowd[::10]
rounds = 10


def change_the_crowd(feed_ports):
    """Round r gives every tenth person of the crowd the status "Round r" on every replica in `feed_ports`, all
    rounds over one feed connection per replica: the service applies one connection's stanzas in order."""
    connections = [socket.create_connection(("127.0.0.1", port)) for port in feed_ports]
    try:
        for connection in connections:
            connection.sendall(header.encode())
        for round_number in range(1, rounds + 1):
            stamp = f"2026-01-01T10:{10 + round_number:02d}:00Z"
            text = "".join(presence(jid, f"Round {round_number}", stamp) for jid in changed).encode()
            for connection in connections:
                connection.sendall(text)
            time.sleep(0.05)
        time.sleep(0.2)
    finally:
        for connection in connections:
            connection.close()


def seam_failures(driver):
    """What the page shows wrongly after the rounds: someone listed twice, or not on their last round."""
    return driver.execute_script(
        "const jids = rows.filter(r => r.jid).map(r => r.jid);"
        "const twice = jids.length - new Set(jids).size;"
        "const behind = arguments[0].filter(j => (people.get(j) || {}).status !== arguments[1]);"
        "return [twice, behind.length, behind.slice(0, 3), people.size];", changed, f"Round {rounds}")


for _, feed_port, _ in replicas:
    feed(feed_port, presence(alice, "Older status", "2026-01-01T09:00:00Z")
         + presence(bob, "First", "2026-01-01T09:00:00Z")
         + "".join(presence(jid, "Round 0", "2026-01-01T09:00:00Z") for jid in crowd))

driver = chromium()
failures = []
try:
    driver.get(base + "/")
    wait = WebDriverWait(driver, 60, poll_frequency=0.02)
    wait.until(lambda d: status_of(d, alice) == "Older status")
    streaming = [replica for replica in replicas if stats(replica[0])["eventStreams"] > 0]
    if len(streaming) != 1:
        raise RuntimeError(f"expected the page's stream on one replica, found {len(streaming)}")
    http_port, feed_port, pid = streaming[0]
    others = [replica for replica in replicas if replica != streaming[0]]
    feed(feed_port, presence(alice, "Newer status", "2026-01-01T10:00:00Z")
         + "".join(presence(jid, "Only here", "2026-01-01T10:00:00Z") for jid in [carol] + visitors))
    wait.until(lambda d: status_of(d, alice) == "Newer status" and status_of(d, carol) == "Only here"
               and d.execute_script("return arguments[0].every(j => (people.get(j) || {}).status === 'Only here')",
                                    visitors))

    os.kill(pid, signal.SIGKILL)
    changer = threading.Thread(target=change_the_crowd, args=([other_feed for _, other_feed, _ in others],))
    changer.start()
    # Back live through another replica: a change fed to every other replica shows.
    for _, other_feed, _ in others:
        feed(other_feed, presence(bob, "After the failover", "2026-01-01T10:30:00Z"))
    wait.until(lambda d: status_of(d, bob) == "After the failover")
    if status_of(driver, alice) != "Newer status":
        failures.append(f"after the failover alice went back to {status_of(driver, alice)!r}")
    def not_unknown(d):
        return d.execute_script(
            "return arguments[0].filter(j => (people.get(j) || {}).state !== 'unknown')", [carol] + visitors)
    try:
        wait.until(lambda d: not not_unknown(d))
    except Exception:  # noqa: BLE001
        left = not_unknown(driver)
        failures.append(f"after the failover {len(left)} of the {1 + len(visitors)} people the next replica never"
                        f" heard of are not shown as unknown, e.g. {left[:3]} (carol shows"
                        f" {status_of(driver, carol)!r})")
    changer.join()
    try:
        WebDriverWait(driver, 30, poll_frequency=0.05).until(
            lambda d: d.execute_script("return !rebuildQueued") and seam_failures(d)[:2] == [0, 0])
    except Exception:  # noqa: BLE001
        twice, behind, examples, size = seam_failures(driver)
        failures.append(f"after changes fed across the failover: {twice} listed twice, {behind} of {size} not on"
                        f" their last change (e.g. {examples})")

    for _, other_feed, _ in others:
        feed(other_feed, presence(alice, "Newest status", "2026-01-01T11:00:00Z"))
    wait.until(lambda d: status_of(d, alice) == "Newest status")
except Exception as error:  # noqa: BLE001 - any failure is reported
    failures.append(f"{type(error).__name__}: {error} (alice shows {status_of(driver, alice)!r})")
finally:
    driver.quit()

for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
