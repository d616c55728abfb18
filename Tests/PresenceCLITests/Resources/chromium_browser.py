"""Debian's chromium, headless, driven by chromedriver through python3-selenium: the browser of the page tests."""
from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def chromium(answer_prompts_myself=False):
    """Headless chromium at a desktop's size; with `answer_prompts_myself`, a prompt waits for the script."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800"]:
        options.add_argument(argument)
    if answer_prompts_myself:
        options.set_capability("unhandledPromptBehavior", "ignore")
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
