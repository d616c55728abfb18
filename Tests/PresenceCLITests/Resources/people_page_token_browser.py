"""The people page in a real browser against a service that requires API tokens.

Usage: people_page_token_browser.py BASE_URL FEED_PORT TOKEN

Feeds one person, opens the page, answers its token prompt first with a wrong token (the page must ask again), then
with the right one, each after 2 s, and waits for the person to be listed live (a third prompt fails it): the
page's data and its change stream (EventSource, which cannot send an Authorization header) both pass with the token
the page keeps in a cookie.
Exits 0 when every check holds; otherwise prints what failed and exits 1.
"""
import socket
import sys
import time

from chromium_browser import chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

base, feed_port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def feed(text):
    with socket.create_connection(("127.0.0.1", feed_port)) as connection:
        connection.sendall(text.encode())
        time.sleep(0.2)


feed("<presence from='alice@engineering.example.com/desk'><status>Behind a token</status></presence>")
driver = chromium(answer_prompts_myself=True)
failures = []
try:
    # Counts the page's prompts: it must ask once for the wrong token and once again, never more.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.__prompts = 0;
        const nativePrompt = window.prompt.bind(window);
        window.prompt = (...args) => { window.__prompts++; return nativePrompt(...args); };"""})
    driver.get(base + "/")
    wait = WebDriverWait(driver, 30, poll_frequency=0.05)
    for answer in ["wrong-token-0123456789", token]:
        wait.until(expected_conditions.alert_is_present())
        # Answered as a person would, after the refused stream's first wait to open again is over: the page
        # must still ask once per refusal, not once for the stream and once for itself.
        time.sleep(2)
        prompt = driver.switch_to.alert
        if "token" not in prompt.text:
            failures.append(f"the prompt does not ask for a token: {prompt.text!r}")
        prompt.send_keys(answer)
        prompt.accept()
    wait.until(lambda d: d.find_element(By.ID, "summary").text.startswith("1 people"))
    time.sleep(3)  # a second check still under way would prompt within its wait
    prompts = driver.execute_script("return window.__prompts")
    if prompts != 2:
        failures.append(f"the page asked for a token {prompts} times (2 expected: the wrong one, the right one)")
    status = driver.execute_script(
        "const row = document.querySelector(`#rows .row.person[data-jid='alice@engineering.example.com']`);"
        "return row && row.querySelector('.status').textContent")
    if status != "Behind a token":
        failures.append(f"alice is not listed with her status: {status!r}")
    feed("<presence from='alice@engineering.example.com/desk'><show>dnd</show><status>Changed live</status></presence>")
    wait.until(lambda d: d.execute_script(
        "const row = document.querySelector(`#rows .row.person[data-jid='alice@engineering.example.com']`);"
        "return row && row.querySelector('.status').textContent") == "Changed live")
except Exception as error:  # noqa: BLE001 - any failure is reported
    failures.append(f"{type(error).__name__}: {error}")
finally:
    driver.quit()

for failure in failures:
    print(failure)
sys.exit(1 if failures else 0)
