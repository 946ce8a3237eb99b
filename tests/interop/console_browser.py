#!/usr/bin/env python3
"""The operator console in a real browser: Debian's headless Chromium driven by Selenium.

- An admin signs in with an admin token (a wrong one is refused on the page), creates an app and
  copies its secrets with the copy buttons, adds an event, an attester and a risk rule, and the
  audit log names the admin token behind each change.
- The app's SDK and backend (Python, as an integrator's would be) start a device and ask risk
  queries, one with a replayed ztoken; the explorer finds the decisions by the device, one decision
  opens in full with its tags and is labelled legitimate with the label buttons, and the overview
  charts them and counts the legitimate decision that was rejected. Screenshots of both go to --screenshots.
- The fraud team's rules: the editor shows a refused expression's error in place (line:column and a
  caret) and keeps what was written; the fixed rule is published in monitor; a replay of the window from
  the replay page completes with its matrix chart and the changed decisions; the rule is switched to
  enforce (a new version) and the version before is restored.
- A page on another site posts the console's form at the operator's cookie: refused (403
  console_form_refused), nothing created; so are posts without the form token or with another
  session's.
- A viewer's session sees no write control on any page, and its forged form posts, from the page's
  own script and from outside with the right form token, get 403 admin_token_read_only.
- Signing out ends the session.

    console_browser.py --url http://127.0.0.1:8080 --admin-token gat_... --viewer-token gat_... [--screenshots DIR]
"""
import argparse
import http.client
import http.server
import os
import threading
import time
import urllib.parse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from attestation_interop import Gatehouse  # noqa: E402
from interop_common import call, check, finish  # noqa: E402
from ztoken_mint import mint, unb64url  # noqa: E402


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1100"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


class Console:
    def __init__(self, driver, url):
        self.driver = driver
        self.url = url.rstrip("/")

    def open(self, path):
        self.driver.get(self.url + path)

    def text(self, selector):
        return self.driver.find_element(By.CSS_SELECTOR, selector).text

    def has(self, selector):
        return len(self.driver.find_elements(By.CSS_SELECTOR, selector)) > 0

    def fill(self, form, values):
        for name, value in values.items():
            field = self.driver.find_element(By.CSS_SELECTOR, f"{form} [name='{name}']")
            if field.tag_name == "select":
                Select(field).select_by_value(value)
            elif field.get_attribute("type") == "checkbox":
                if not field.is_selected():
                    field.click()
            else:
                field.clear()
                field.send_keys(value)

    def submit(self, form):
        self.press(f"{form} button[type='submit']")

    def press(self, button):
        # The page being left is itself "complete": mark it, and wait for a complete page without the
        # mark, or a read right after a submit may see the old page (or an element of it go stale).
        # Mid-navigation Chromium may answer a script with an error of its own: asked again.
        self.driver.execute_script("window.gatehouseLeaving = true")
        self.driver.find_element(By.CSS_SELECTOR, button).click()
        WebDriverWait(self.driver, 10, ignored_exceptions=(WebDriverException,)).until(
            lambda d: d.execute_script("return window.gatehouseLeaving === undefined && document.readyState === 'complete'"))

    def press_confirmed(self, button):
        """A button whose form asks the operator to confirm first (data-confirm): the dialog accepted."""
        self.driver.execute_script("window.gatehouseLeaving = true")
        self.driver.find_element(By.CSS_SELECTOR, button).click()
        WebDriverWait(self.driver, 10).until(lambda d: d.switch_to.alert).accept()
        WebDriverWait(self.driver, 10, ignored_exceptions=(WebDriverException,)).until(
            lambda d: d.execute_script("return window.gatehouseLeaving === undefined && document.readyState === 'complete'"))

    def sign_in(self, token):
        self.open("/console")
        check(self.driver.current_url.endswith("/console/sign-in"), "without a session /console sends the browser to sign in")
        self.fill("form", {"token": token})
        self.submit("form")

    def cookie(self):
        return {c["name"]: c for c in self.driver.get_cookies()}.get("gatehouse_console")

    def csrf(self):
        return self.driver.find_element(By.CSS_SELECTOR, "input[name='csrf']").get_attribute("value")

    def post_forms(self):
        return [f.get_attribute("action") for f in self.driver.find_elements(By.CSS_SELECTOR, "form") if f.get_attribute("method") == "post"]


def post_form(url, path, fields, headers):
    """A form post from outside the browser, without following the answer's redirect."""
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        connection.request("POST", path, urllib.parse.urlencode(fields),
                           dict(headers, **{"Content-Type": "application/x-www-form-urlencoded"}))
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        connection.close()


def admin_flow(console, gh, shots):
    """Signs in, creates an app (secrets copied), an event, an attester and a rule; returns the app."""
    console.sign_in("gat_" + "x" * 43)
    check(console.has("#sign-in-error"), "an unknown admin token is refused on the sign-in page")
    console.fill("form", {"token": gh.admin_token})
    console.submit("form")
    check(console.driver.current_url.endswith("/console") and console.text("#signed-in-as") == gh.admin_name,
          "the admin token signs in; the page names it")
    cookie = console.cookie()
    check(cookie is not None and cookie["httpOnly"] and cookie.get("sameSite") == "Strict", "the session cookie is HttpOnly and SameSite=Strict")

    name = f"Console shop {int(time.time())}"
    console.fill("#create-app", {"name": name, "platform_ios": "1", "platform_android": "1"})
    console.submit("#create-app")
    secrets = {}
    for field in ("app-key", "secret-key", "server-secret"):
        console.driver.find_element(By.CSS_SELECTOR, f"button[data-copy='{field}']").click()
        secrets[field] = console.driver.find_element(By.ID, field).get_attribute("value")
    copied = [b.text for b in console.driver.find_elements(By.CSS_SELECTOR, "button.copy")]
    check(copied == ["Copied"] * 3, f"each secret has a copy button that copies it ({copied})")
    app = {"app": {"appKey": secrets["app-key"]}, "secretKey": secrets["secret-key"], "serverSecret": secrets["server-secret"]}
    status, _, details = gh.admin_call("GET", f"/v1/admin/apps/{secrets['app-key']}")
    check(status == 200 and details["app"]["name"] == name, "the app made in the console is the API's app")
    console.open(f"/console/apps/{secrets['app-key']}")
    check(secrets["secret-key"] not in console.driver.page_source and secrets["server-secret"] not in console.driver.page_source,
          "the app's page never shows the secrets again")

    console.fill("#add-event", {"eventId": "3301", "name": "login"})
    console.submit("#add-event")
    check("3301" in console.text("#events"), "an event is added")
    console.open(f"/console/apps/{secrets['app-key']}/attesters")
    console.fill("#create-attester", {"attestId": "login-pow", "kind": "pow", "powCost": "1000"})
    console.submit("#create-attester")
    check("/attesters/login-pow" in console.driver.current_url and "pow" in console.text("#attester-settings"), "a proof-of-work attester is created")
    console.open(f"/console/apps/{secrets['app-key']}/attesters")
    console.fill("#create-attester", {"attestId": "ios-hardware", "kind": "appAttest", "teamId": "ABCDE12345", "bundleIds": "com.example.shop"})
    console.submit("#create-attester")
    check("appAttest" in console.text("#attester-settings"), "an App Attest attester is created")
    console.open(f"/console/apps/{secrets['app-key']}/attesters")
    console.fill("#create-attester", {"attestId": "bad-android", "kind": "androidKeyAttestation", "packageNames": "com.example.shop", "signingDigests": "abcd"})
    console.submit("#create-attester")
    check(console.has("#error-code") and console.text("#error-code") == "invalid_attester", "a bad Android attester is refused with the API's code")

    console.open(f"/console/apps/{secrets['app-key']}/risk")
    console.fill("#rules-app", {"rejectAt": "60"})
    console.submit("#rules-app")
    row = console.driver.find_element(By.CSS_SELECTOR, "#effective-rules tr[data-scope='app']").text
    check(" 60 " in f" {row} ", f"the app's rejectAt is now 60 in the rules in effect ({row})")
    check(console.driver.find_element(By.CSS_SELECTOR, "#effective-rules tr[data-scope='3301']").text.split()[3] == "60",
          "event 3301 inherits it")

    console.open(f"/console/audit?appKey={secrets['app-key']}")
    audit = console.text("#audit")
    for action in ("app.create", "event.register", "attester.create", "risk.rules"):
        check(action in audit, f"the audit log shows {action}")
    check(f"admin-token:{gh.admin_name}" in audit, "the audit log names the admin token behind the changes")
    console.fill("#audit-filters", {"action": "risk.rules", "actor": f"admin-token:{gh.admin_name}"})
    console.submit("#audit-filters")
    rows = console.driver.find_elements(By.CSS_SELECTOR, "#audit tbody tr")
    check(len(rows) == 1 and "risk.rules" in rows[0].text, "the audit log filtered by action and actor shows the one rule change")
    return app


def decisions(console, gh, app, shots):
    """Risk queries from the app's backend; the explorer finds them by device; the overview charts them."""
    app_key = app["app"]["appKey"]
    status, started = gh.sdk(app, "POST", "/v1/sdk/device/start", {"deviceId": "console-browser", "collectType": 7})
    check(status == 200, f"device start with the secretKey copied from the console ({status})")
    device = started["deviceId"]
    ztoken = mint(unb64url(started["ztokenKey"]), unb64url(started["ztokenContext"]), 3301, "shopper-1", started["ztokenTtlSeconds"],
                  int(time.time()), os.urandom(12))
    answers = []
    for _ in range(2):
        status, _, decision = call("POST", gh.url + "/v1/risk/query",
                                   {"ztoken": ztoken, "eventId": 3301, "accountId": "shopper-1", "clientIp": "203.0.113.7"}, gh.backend(app))
        check(status == 200, f"a risk query with the server secret copied from the console ({status})")
        answers.append(decision)
    check(answers[1]["decision"] == "reject", "the replayed ztoken is rejected")
    # A few more devices, accounts and addresses, each token used twice, so the overview has something to rank.
    for number in range(4):
        status, other = gh.sdk(app, "POST", "/v1/sdk/device/start", {"deviceId": f"console-browser-{number}", "collectType": 7})
        token = mint(unb64url(other["ztokenKey"]), unb64url(other["ztokenContext"]), 3301, f"shopper-{number + 2}",
                     other["ztokenTtlSeconds"], int(time.time()), os.urandom(12))
        for _ in range(number + 1):
            status, _, _ = call("POST", gh.url + "/v1/risk/query", {"ztoken": token, "eventId": 3301, "accountId": f"shopper-{number + 2}",
                                                                    "clientIp": f"198.51.100.{number + 1}"}, gh.backend(app))
            check(status == 200, f"risk query {number} ({status})")

    console.open("/console/decisions")
    console.fill("#decision-filters", {"appKey": app_key, "deviceId": device})
    console.submit("#decision-filters")
    table = console.text("#decisions")
    check(device in table and "reject" in table and table.count("\n") >= 2, "the explorer finds both decisions by their device")
    if shots:
        console.driver.save_screenshot(os.path.join(shots, "console-explorer.png"))
    console.fill("#decision-filters", {"tag": "token.replayed"})
    console.submit("#decision-filters")
    rows = console.driver.find_elements(By.CSS_SELECTOR, "#decisions tbody tr")
    check(len(rows) == 1 and "reject" in rows[0].text, "filtered by tag, only the replayed one")
    rows[0].find_element(By.CSS_SELECTOR, "a").click()
    check(answers[1]["decisionId"] in console.driver.current_url and "token.replayed" in console.text("#decision-tags"),
          "one decision opens in full with its tags and reasons")
    # The replayed token was the shopper's own second tap: an operator labels it legitimate.
    console.fill("#label-form", {"kind": "other", "note": "the shopper tapped twice"})
    console.press("#label-legitimate")
    check("legitimate" in console.text("#decision-label") and "the shopper tapped twice" in console.text("#decision-label"),
          "the label buttons label the decision")

    console.open(f"/console/apps/{app_key}/overview?window=1h")
    bars = console.driver.find_elements(By.CSS_SELECTOR, "#decisions-chart rect")
    check(len(bars) >= 1 and console.text("#total-reject") == "7", f"the overview charts the decisions ({len(bars)} bars, 7 rejected)")
    check("203.0.113.7" in console.driver.page_source and "token.replayed" in console.text("#top-tags"),
          "the overview ranks the rejected address and the tag")
    check(console.text("#legitimate-rejected") == "1", "the overview counts the legitimate traffic that was rejected")
    if shots:
        console.driver.set_window_size(1400, 1650)
        console.driver.save_screenshot(os.path.join(shots, "console-overview.png"))
        console.driver.set_window_size(1400, 1100)


def policy_flow(console, gh, app, shots):
    """The rule editor shows an error in place, then publishes; a replay of the window completes with its
    chart; the rule's mode is switched (a new version) and the version before is restored."""
    app_key = app["app"]["appKey"]
    console.open(f"/console/apps/{app_key}/policy")
    console.fill("#rule-editor", {"name": "known-device", "when": "device.known &&\n  nosuch > 1", "decide": "review", "mode": "monitor"})
    console.press("#publish-rule")
    error = console.text("#rule-error")
    check("2:3:" in error and "nosuch" in error and "^" in error, f"the editor shows the refused expression's error in place ({error!r})")
    check("nosuch" in console.driver.find_element(By.ID, "rule-when").get_attribute("value"), "what was written is kept in the editor")
    console.fill("#rule-editor", {"when": "device.known"})
    console.press("#publish-rule")
    rules = console.text("#policy-rules")
    check("known-device" in rules and "monitor" in rules, "the fixed rule is published, in monitor")

    console.open(f"/console/apps/{app_key}/replays")
    # The app's decisions so far were reviews and rejects: a rule that rejects everything changes the reviews.
    console.fill("#replay-form", {"from": "2000-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z", "name": "everything", "when": "true",
                                  "decide": "reject"})
    console.press("#start-replay")
    WebDriverWait(console.driver, 60, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.find_element(By.ID, "replay-status").text == "completed")
    bars = console.driver.find_elements(By.CSS_SELECTOR, "#replay-chart rect")
    changed = int(console.text("#replay-changed"))
    check(len(bars) == 9 and changed >= 1 and console.has("#replay-changes a"),
          f"a replay of the window completes: the matrix as a chart, {changed} changed decisions linked")
    if shots:
        console.driver.save_screenshot(os.path.join(shots, "console-replay.png"))

    console.open(f"/console/apps/{app_key}/policy")
    versions_before = len(console.driver.find_elements(By.CSS_SELECTOR, "#policy-versions tbody tr"))
    console.press("#policy-rules tr[data-rule='known-device'] button.switch-mode")
    check("enforce" in console.driver.find_element(By.CSS_SELECTOR, "#policy-rules tr[data-rule='known-device']").text,
          "the rule's mode switches to enforce")
    versions = console.driver.find_elements(By.CSS_SELECTOR, "#policy-versions tbody tr")
    check(len(versions) == versions_before + 1, "the switch publishes a version")
    earlier = versions[1].get_attribute("data-version")
    console.press_confirmed(f"#policy-versions tr[data-version='{earlier}'] button.restore")
    live = console.driver.find_element(By.CSS_SELECTOR, "#policy-versions tbody tr").text
    check("(live)" in live and "monitor" in console.driver.find_element(By.CSS_SELECTOR, "#policy-rules tr[data-rule='known-device']").text,
          f"version {earlier} is restored: the rule is in monitor again ({live})")
    if shots:
        console.driver.save_screenshot(os.path.join(shots, "console-policy.png"))
    status, _, audit = gh.admin_call("GET", f"/v1/admin/audit?appKey={app_key}&action=risk.policy.restore")
    check(status == 200 and len(audit["items"]) == 1, "the restore is audited")


def cross_site(console, gh):
    """A page on another origin posts the console's form with the operator's cookie riding along."""
    class Attacker(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            page = (f'<form id="f" method="post" action="{console.url}/console/apps"><input name="name" value="forged">'
                    '<input name="platform_ios" value="1"></form><script>document.getElementById("f").submit()</script>').encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        console.driver.get(f"http://127.0.0.1:{attacker.server_address[1]}/")
        WebDriverWait(console.driver, 10).until(lambda d: "/console/apps" in d.current_url)
        refused = console.has("#error-code") and console.text("#error-code") == "console_form_refused"
        check(refused, "a cross-site post of the console's form is refused (403 console_form_refused)")
    finally:
        attacker.shutdown()
    status, _, apps = gh.admin_call("GET", "/v1/admin/apps?limit=100")
    check(status == 200 and all(a["name"] != "forged" for a in apps["items"]), "the cross-site post created nothing")
    cookie = {"Cookie": f"gatehouse_console={console.cookie()['value']}"}
    console.open("/console")
    csrf = console.csrf()
    for what, fields, extra in [
        ("without the form token", {"name": "forged", "platform_ios": "1"}, {}),
        ("with a made-up form token", {"name": "forged", "platform_ios": "1", "csrf": "A" * 43}, {}),
        ("with the form token from another site's page", {"name": "forged", "platform_ios": "1", "csrf": csrf}, {"Origin": "https://evil.example"}),
    ]:
        status, body = post_form(console.url, "/console/apps", fields, dict(cookie, **extra))
        check(status == 403 and "console_form_refused" in body, f"a post {what} is refused ({status})")


def viewer_flow(console, gh, app, viewer_token):
    app_key = app["app"]["appKey"]
    console.open("/console")
    console.driver.find_element(By.ID, "sign-out").click()
    # The click posts a form: wait for its answer (the sign-in page) before asking for /console again,
    # or the next request can overtake the sign-out and still carry a live session.
    WebDriverWait(console.driver, 10).until(lambda d: d.current_url.endswith("/console/sign-in"))
    console.open("/console")
    check(console.driver.current_url.endswith("/console/sign-in"), "signing out ends the session")
    console.sign_in(viewer_token)
    check(console.text(".role") == "viewer", "the viewer's token signs in as a viewer")
    for path in ("/console", f"/console/apps/{app_key}", f"/console/apps/{app_key}/attesters", f"/console/apps/{app_key}/attesters/login-pow",
                 f"/console/apps/{app_key}/risk", f"/console/apps/{app_key}/roles", "/console/signing-keys", "/console/decisions",
                 f"/console/apps/{app_key}/overview", "/console/audit", f"/console/apps/{app_key}/policy",
                 f"/console/apps/{app_key}/replays"):
        console.open(path)
        forms = console.post_forms()
        check(len(forms) == 1 and forms[0].endswith("/console/sign-out"), f"a viewer sees no write control on {path}")
    console.open(f"/console/apps/{app_key}")
    csrf = console.csrf()
    console.driver.execute_script(
        "var f = document.createElement('form'); f.method = 'post'; f.action = '/console/apps/' + arguments[0] + '/disable';"
        "var c = document.createElement('input'); c.name = 'csrf'; c.value = arguments[1]; f.appendChild(c);"
        "document.body.appendChild(f); f.submit();", app_key, csrf)
    WebDriverWait(console.driver, 10).until(lambda d: d.current_url.endswith("/disable"))
    check(console.has("#error-code") and console.text("#error-code") == "admin_token_read_only",
          "a viewer's forged form post from the page itself is refused (403 admin_token_read_only)")
    cookie = {"Cookie": f"gatehouse_console={console.cookie()['value']}"}
    status, body = post_form(console.url, "/console/apps", {"name": "viewer's", "platform_ios": "1", "csrf": csrf}, cookie)
    check(status == 403 and "admin_token_read_only" in body, f"a viewer's forged post with its own form token is refused ({status})")
    status, _, details = gh.admin_call("GET", f"/v1/admin/apps/{app_key}")
    check(details["app"]["status"] == "active", "the app is still active")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--admin-name", required=True)
    parser.add_argument("--viewer-token", required=True)
    parser.add_argument("--screenshots")
    args = parser.parse_args()
    gh = Gatehouse(args.url, args.admin_token)
    gh.admin_token = args.admin_token
    gh.admin_name = args.admin_name
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    driver = browser()
    try:
        console = Console(driver, args.url)
        app = admin_flow(console, gh, args.screenshots)
        decisions(console, gh, app, args.screenshots)
        policy_flow(console, gh, app, args.screenshots)
        cross_site(console, gh)
        viewer_flow(console, gh, app, args.viewer_token)
    finally:
        driver.quit()
    finish("console browser")


if __name__ == "__main__":
    main()
