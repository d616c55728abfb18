"""The people page in a real browser (Debian's chromium through chromedriver and python3-selenium).

Usage: people_page_browser.py BASE_URL FEED_PORT SCREENSHOT.png PEOPLE

Feeds PEOPLE people over the service's feed port, opens the page, finds a person by searching, feeds a change
and waits for the dot and the text to change without a reload. Exits 0 when every check holds; otherwise prints
what failed and exits 1. Either way the screenshot is saved.
"""
import socket
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

base, feed_port, screenshot, people = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
departments = ["engineering", "sales", "people", "finance"]


def feed(text):
    with socket.create_connection(("127.0.0.1", feed_port)) as connection:
        connection.sendall(text.encode())
        time.sleep(0.2)


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

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
failures = []
try:
    driver.get(base + "/")
    wait = WebDriverWait(driver, 30)
    wait.until(lambda d: f"{people + 2:,} people" in d.find_element(By.ID, "summary").text)
    rendered = len(driver.find_elements(By.CSS_SELECTOR, ".row"))
    if rendered > 200:
        failures.append(f"{rendered} rows in the page for {people + 2} people: the list is not virtualised")
    driver.execute_script("window.__sameDocument = 'yes'")

    search = driver.find_element(By.ID, "search")
    search.send_keys("alice")
    alice = "#rows .row.person[data-jid='alice@engineering.example.com']"
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".row.person")) == 1)
    row = driver.find_element(By.CSS_SELECTOR, alice)
    if row.find_element(By.CSS_SELECTOR, ".status").text != "Writing the design doc":
        failures.append("alice's status text is not shown")
    if "available" not in row.find_element(By.CSS_SELECTOR, ".dot").get_attribute("class"):
        failures.append("alice's dot is not green (available)")
    groups = [g.text for g in driver.find_elements(By.CSS_SELECTOR, ".row.group")]
    if groups != ["engineering"]:
        failures.append(f"alice should be under engineering, groups shown: {groups}")

    feed(header + presence("alice@engineering.example.com", show="dnd", status="In a review"))
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, alice + " .status").text == "In a review")
    if "dnd" not in driver.find_element(By.CSS_SELECTOR, alice + " .dot").get_attribute("class"):
        failures.append("alice's dot did not turn red (do not disturb)")
    if driver.execute_script("return window.__sameDocument") != "yes":
        failures.append("the page reloaded")

    search.clear()
    search.send_keys("gone home")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".row.person")) == 1)
    bob = driver.find_element(By.CSS_SELECTOR, ".row.person")
    if bob.get_attribute("data-state") != "offline":
        failures.append("bob is not shown offline")
    search.clear()
    search.send_keys("alice")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".row.person")) == 1)
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
