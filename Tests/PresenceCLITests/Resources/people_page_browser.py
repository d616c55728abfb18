"""The people page in a real browser (Debian's chromium through chromedriver and python3-selenium).

Usage: people_page_browser.py BASE_URL FEED_PORT SCREENSHOT.png PEOPLE [ROUNDS]

Feeds PEOPLE people over the service's feed port, then opens the page while rounds of changes to a tenth of
them are fed (ROUNDS, 10 unless given; 0 times the page opening alone): the page must list everyone once and end on each person's last change (the snapshot-then-changes
seam: a change fed while the snapshot is written is neither lost nor shown twice). Then it finds a person by
searching, feeds a change and waits for the dot and the text to change without a reload. Exits 0 when every
check holds; otherwise prints what failed and exits 1. Either way the screenshot is saved.
"""
import socket
import sys
import threading
import time

from chromium_browser import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

base, feed_port, screenshot, people = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
departments = ["engineering", "sales", "people", "finance"]


def feed(text):
    with socket.create_connection(("127.0.0.1", feed_port)) as connection:
        connection.sendall(text.encode())
        time.sleep(0.2)


def row_info(driver, jid):
    """The row of `jid` as the page shows it now, read in one step: (status text, dot class, state), or None.
    The list redraws its rows as changes arrive, so element handles kept across calls go stale."""
    return driver.execute_script(
        "const row = document.querySelector(`#rows .row.person[data-jid='${arguments[0]}']`);"
        "return row && [row.querySelector('.status').textContent, row.querySelector('.dot').className,"
        " row.dataset.state];", jid)


def person_rows(driver):
    return driver.execute_script("return document.querySelectorAll('#rows .row.person').length")


def presence(jid, show=None, status=None, kind=None):
    attributes = f" type='{kind}'" if kind else ""
    body = (f"<show>{show}</show>" if show else "") + (f"<status>{status}</status>" if status else "")
    return f"<presence from='{jid}/desk'{attributes}>{body}</presence>"


header = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>"
crowd = "".join(
    presence(f"person{i}@{departments[i % 4]}.example.com", show=["away", None, "dnd", "xa"][i % 4],
             status=f"Working on item {i}")
    for i in range(people))
feed(header + crowd + presence("alice@engineering.example.com", status="Writing the design doc")
     + presence("bob@sales.example.com", kind="unavailable", status="Gone home"))

driver = chromium()
failures = []
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 10
changed = range(0, people, 10) if rounds else range(0)


def change_while_opening():
    """Round r gives every tenth person the status "Round r". All rounds go over one feed connection: the service
    applies one connection's stanzas in order, and separate connections in any order."""
    with socket.create_connection(("127.0.0.1", feed_port)) as connection:
        connection.sendall(header.encode())
        for round_number in range(1, rounds + 1):
            connection.sendall("".join(
                presence(f"person{i}@{departments[i % 4]}.example.com", status=f"Round {round_number}")
                for i in changed).encode())
            time.sleep(0.05)
        time.sleep(0.2)


def seam_failures(driver):
    """What the page shows wrongly after the rounds: someone listed twice, or not on their last round."""
    return driver.execute_script(
        "const jids = rows.filter(r => r.jid).map(r => r.jid);"
        "const twice = jids.length - new Set(jids).size;"
        "const behind = arguments[0].filter(j => (people.get(j) || {}).status !== arguments[1]);"
        "return [twice, behind.length, behind.slice(0, 3)];",
        [f"person{i}@{departments[i % 4]}.example.com" for i in changed], f"Round {rounds}")


try:
    changer = threading.Thread(target=change_while_opening)
    opened = time.monotonic()
    changer.start()
    driver.get(base + "/")
    wait = WebDriverWait(driver, 120, poll_frequency=0.01)
    wait.until(lambda d: f"{people + 2:,} people" in d.find_element(By.ID, "summary").text)
    print(f"timing: {people + 2:,} people listed {time.monotonic() - opened:.2f} s after opening the page")
    marks = driver.execute_script(
        "return Object.fromEntries(performance.getEntriesByType('mark').map(m => [m.name, m.startTime]))")
    print("timing: the page's own marks, ms after navigation: "
          + ", ".join(f"{name} {start:.0f}" for name, start in marks.items()))
    heap = driver.execute_script("return performance.memory ? performance.memory.usedJSHeapSize : null")
    if heap:
        print(f"timing: the page's JavaScript heap with everyone listed: {heap / 1048576:.0f} MiB")
    changer.join()
    try:
        WebDriverWait(driver, 30, poll_frequency=0.05).until(
            lambda d: d.execute_script("return !rebuildQueued") and seam_failures(d)[:2] == [0, 0])
    except Exception:  # noqa: BLE001
        twice, behind, examples = seam_failures(driver)
        failures.append(f"after changes fed while the page opened: {twice} listed twice, {behind} not on their"
                        f" last change (e.g. {examples})")
    rendered = driver.execute_script("return document.querySelectorAll('#rows .row').length")
    if rendered > 200:
        failures.append(f"{rendered} rows in the page for {people + 2} people: the list is not virtualised")
    driver.execute_script("window.__sameDocument = 'yes'")

    search = driver.find_element(By.ID, "search")
    typed = time.monotonic()
    search.send_keys("alice")
    alice = "alice@engineering.example.com"
    wait.until(lambda d: person_rows(d) == 1)
    print(f"timing: typing 'alice' to one row shown {1000 * (time.monotonic() - typed):.0f} ms")
    status, dot, _ = row_info(driver, alice)
    if status != "Writing the design doc":
        failures.append(f"alice's status text is not shown: {status!r}")
    if "available" not in dot:
        failures.append("alice's dot is not green (available)")
    groups = driver.execute_script("return [...document.querySelectorAll('#rows .row.group')].map(g => g.textContent)")
    if groups != ["engineering"]:
        failures.append(f"alice should be under engineering, groups shown: {groups}")

    feed(header + presence("alice@engineering.example.com", show="dnd", status="In a review"))
    wait.until(lambda d: (row_info(d, alice) or [""])[0] == "In a review")
    if "dnd" not in row_info(driver, alice)[1]:
        failures.append("alice's dot did not turn red (do not disturb)")
    if driver.execute_script("return window.__sameDocument") != "yes":
        failures.append("the page reloaded")

    # A search finds a status as it is now, not as it was when the list was ordered.
    search.clear()
    search.send_keys("in a review")
    try:
        WebDriverWait(driver, 20, poll_frequency=0.05).until(
            lambda d: d.execute_script("return !rebuildQueued") and person_rows(d) == 1 and row_info(d, alice))
    except Exception:  # noqa: BLE001
        failures.append(f"searching alice's new status shows {person_rows(driver)} rows, not hers alone")
    search.clear()
    search.send_keys("writing the design")
    try:
        WebDriverWait(driver, 20, poll_frequency=0.05).until(
            lambda d: d.execute_script("return !rebuildQueued") and person_rows(d) == 0)
    except Exception:  # noqa: BLE001
        failures.append(f"searching alice's old status still shows {person_rows(driver)} rows")

    search.clear()
    search.send_keys("gone home")
    wait.until(lambda d: person_rows(d) == 1 and row_info(d, "bob@sales.example.com"))
    bob = row_info(driver, "bob@sales.example.com")
    if not bob or bob[2] != "offline":
        failures.append(f"bob is not shown offline: {bob}")
    # A change while a query narrows letter by letter: someone it did not match before and matches now is shown.
    search.clear()
    search.send_keys("revie")
    wait.until(lambda d: d.execute_script("return !rebuildQueued") and person_rows(d) == 1 and row_info(d, alice))
    feed(header + presence("bob@sales.example.com", kind="unavailable", status="Reviewed the plan"))
    try:
        WebDriverWait(driver, 20, poll_frequency=0.05).until(
            lambda d: person_rows(d) == 2 and row_info(d, "bob@sales.example.com"))
    except Exception:  # noqa: BLE001
        failures.append(f"a search for 'revie' shows {person_rows(driver)} rows after bob's status became"
                        " 'Reviewed the plan', not alice's and his")
    search.clear()
    search.send_keys("alice")
    wait.until(lambda d: person_rows(d) == 1 and row_info(d, alice))
    # The panel refreshes every second: wait for a refresh after the last feed.
    try:
        WebDriverWait(driver, 10).until(
            lambda d: f"{people + 2:,}" in d.find_element(By.ID, "storage-figures").text)
    except Exception:  # noqa: BLE001
        figures = driver.find_element(By.ID, "storage-figures").text
        failures.append(f"the storage panel does not show {people + 2:,} entries: {figures!r}")
except Exception as error:  # noqa: BLE001 - any failure is reported with the screenshot
    failures.append(f"{type(error).__name__}: {error}")
finally:
    driver.save_screenshot(screenshot)
    driver.quit()

for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
