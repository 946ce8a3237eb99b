(function () {
  "use strict";
  var script = document.currentScript;
  var base = new URL("../", script.src);
  var query = new URLSearchParams(location.search);
  function setting(name) { return (script.dataset && script.dataset[name]) || query.get(name) || null; }
  var cfg = {
    appKey: setting("appKey"),
    lang: setting("lang") === "cn" ? "cn" : "en",
    mode: setting("mode") === "popup" ? "popup" : "embed",
    cancelable: setting("cancelable") !== "0",
    deviceId: setting("deviceId"),
    attestId: setting("attestId"),
    action: setting("action"),
    cdata: setting("cdata")
  };
  var texts = {
    en: {
      title: "Drag the slider to fit the piece", hint: "Slide to complete the puzzle", loading: "Loading\u2026",
      retry: "Not quite. Try again.", robot: "Drag it as you normally would.", ok: "Verified",
      renew: "New puzzle\u2026", error: "Something went wrong. Try again later.", busy: "Too many tries. Wait a moment.",
      refresh: "New puzzle", close: "Cancel"
    },
    cn: {
      title: "\u62d6\u52a8\u6ed1\u5757\u5b8c\u6210\u62fc\u56fe", hint: "\u5411\u53f3\u62d6\u52a8\u6ed1\u5757\u586b\u5145\u62fc\u56fe", loading: "\u52a0\u8f7d\u4e2d\u2026",
      retry: "\u672a\u901a\u8fc7\uff0c\u8bf7\u518d\u8bd5\u4e00\u6b21", robot: "\u8bf7\u50cf\u5e73\u5e38\u4e00\u6837\u62d6\u52a8", ok: "\u9a8c\u8bc1\u6210\u529f",
      renew: "\u6b63\u5728\u6362\u4e00\u5f20\u2026", error: "\u51fa\u9519\u4e86\uff0c\u8bf7\u7a0d\u540e\u91cd\u8bd5", busy: "\u5c1d\u8bd5\u592a\u9891\u7e41\uff0c\u8bf7\u7a0d\u540e",
      refresh: "\u6362\u4e00\u5f20", close: "\u53d6\u6d88"
    }
  }[cfg.lang];
  function el(id) { return document.getElementById(id); }
  var root = el("gh-root"), card = el("gh-card"), stage = el("gh-stage"), bg = el("gh-bg"), piece = el("gh-piece");
  var statusLine = el("gh-status"), track = el("gh-track"), fill = el("gh-fill"), handle = el("gh-handle"), hint = el("gh-hint");
  var refresh = el("gh-refresh"), close = el("gh-close");
  document.documentElement.lang = cfg.lang === "cn" ? "zh-CN" : "en";
  root.className = "gh-root " + cfg.mode;
  el("gh-title").textContent = texts.title;
  hint.textContent = texts.hint;
  refresh.title = texts.refresh;
  close.title = texts.close;
  if (!cfg.cancelable) close.className = "gh-hidden";

  var challenge = null, drag = null, busy = false, finished = false;

  // The host app learns the result: a WKWebView's message handler, else postMessage to the
  // parent frame, the opener, or this window; the last result also sits on <html>. A pass
  // token goes only to this origin and the origins the operator allowed to embed the page
  // (the page's gatehouse-embed-origins), never to whichever site framed or opened it.
  var embedMeta = document.querySelector('meta[name="gatehouse-embed-origins"]');
  var origins = [location.origin].concat(((embedMeta && embedMeta.content) || "").split(" ").filter(Boolean));
  function notify(message) {
    message.source = "gatehouse-captcha";
    if (challenge) message.traceId = challenge.traceId;
    document.documentElement.setAttribute("data-gatehouse-result", JSON.stringify(message));
    var handlers = window.webkit && window.webkit.messageHandlers;
    if (handlers && handlers.gatehouseCaptcha) { handlers.gatehouseCaptcha.postMessage(message); return; }
    var target = window.parent !== window ? window.parent : (window.opener || window);
    origins.forEach(function (origin) {
      try { target.postMessage(message, origin); } catch (ignored) {}
    });
  }
  function say(text, ok) {
    statusLine.textContent = text || "";
    statusLine.className = "gh-status" + (text ? " gh-show" : "") + (ok ? " gh-ok" : "");
  }
  function scale() { return stage.clientWidth / challenge.width; }
  function place(offset) {
    piece.style.left = offset + "px";
    handle.style.left = offset + "px";
    fill.style.width = (offset + handle.offsetWidth / 2) + "px";
    handle.setAttribute("aria-valuenow", String(Math.round(100 * offset / Math.max(1, track.clientWidth - handle.offsetWidth))));
  }
  function post(path, body) {
    return fetch(new URL(path, base), {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), credentials: "omit"
    }).then(function (response) { return response.json(); });
  }
  function refused(result) {
    busy = false;
    say(result && result.reason === "rate_limited" ? texts.busy : texts.error);
    notify({ type: "failed", code: String(result && result.code ? result.code : 1002) });
  }
  function load() {
    if (finished) return;
    busy = true;
    challenge = null;
    say(texts.loading);
    card.classList.remove("gh-done");
    var body = { appKey: cfg.appKey || "", language: cfg.lang };
    ["deviceId", "attestId", "action", "cdata"].forEach(function (name) { if (cfg[name]) body[name] = cfg[name]; });
    post("v1/captcha/challenges", body).then(function (result) {
      if (result.code !== 0) { refused(result); return; }
      challenge = result;
      bg.src = result.background;
      piece.src = result.piece;
      piece.style.width = (100 * result.pieceWidth / result.width) + "%";
      place(0);
      say("");
      busy = false;
    }, function () { busy = false; say(texts.error); notify({ type: "failed", code: "8004" }); });
  }
  function thin(points) {
    // Keep the request small: drop every other inner sample once there are too many.
    var kept = [points[0]];
    for (var i = 1; i < points.length - 1; i += 2) kept.push(points[i]);
    kept.push(points[points.length - 1]);
    return kept;
  }
  function round(value) { return Math.round(value * 100) / 100; }

  handle.addEventListener("pointerdown", function (event) {
    if (busy || !challenge || finished) return;
    event.preventDefault();
    handle.setPointerCapture(event.pointerId);
    drag = { x0: event.clientX, y0: event.clientY, t0: performance.now(), offset: 0, points: [{ x: 0, y: 0, t: 0 }] };
    say("");
  });
  handle.addEventListener("pointermove", function (event) {
    if (!drag) return;
    var s = scale();
    var limit = Math.min(track.clientWidth - handle.offsetWidth, stage.clientWidth - challenge.pieceWidth * s);
    drag.offset = Math.max(0, Math.min(limit, event.clientX - drag.x0));
    place(drag.offset);
    drag.points.push({ x: round(drag.offset / s), y: round((event.clientY - drag.y0) / s), t: round(performance.now() - drag.t0) });
    if (drag.points.length >= 1000) drag.points = thin(drag.points);
  });
  function release() {
    if (!drag) return;
    var finishedDrag = drag;
    drag = null;
    var position = round(finishedDrag.offset / scale());
    var points = finishedDrag.points;
    if (points.length < 2 || position === 0) { place(0); return; }
    busy = true;
    post("v1/captcha/challenges/" + encodeURIComponent(challenge.challengeId) + "/answers", {
      appKey: cfg.appKey || "", position: position, durationMs: round(performance.now() - finishedDrag.t0), trajectory: points
    }).then(function (result) {
      if (result.code === 0) {
        finished = true;
        card.classList.add("gh-done");
        say(texts.ok, true);
        notify({ type: "success", data: result.passToken });
        return;
      }
      busy = false;
      card.classList.remove("gh-shake");
      void card.offsetWidth;
      card.classList.add("gh-shake");
      if (result.code === 1001 && result.attemptsLeft > 0) {
        say(result.reason === "wrong_position" ? texts.retry : texts.robot);
        place(0);
        return;
      }
      if (result.code === 1001) {
        notify({ type: "failed", code: "1001" });
        say(texts.renew);
        setTimeout(load, 800);
        return;
      }
      refused(result);
    }, function () { busy = false; place(0); say(texts.error); notify({ type: "failed", code: "8004" }); });
  }
  handle.addEventListener("pointerup", release);
  handle.addEventListener("pointercancel", function () { drag = null; place(0); });
  refresh.addEventListener("click", function () { if (!busy) load(); });
  function cancel() {
    if (!cfg.cancelable || finished) return;
    finished = true;
    notify({ type: "failed", code: "1005" });
  }
  close.addEventListener("click", cancel);
  document.addEventListener("keydown", function (event) { if (event.key === "Escape") cancel(); });
  if (!cfg.appKey) { say(texts.error); notify({ type: "failed", code: "1003" }); return; }
  load();
})();
