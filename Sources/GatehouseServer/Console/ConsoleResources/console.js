// The console's one script: copy buttons for secrets shown once, and a confirmation before changes
// that a slip of the mouse should not make. Pages work without it (forms post as plain HTML).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var field = document.getElementById(button.getAttribute("data-copy"));
      if (!field) { return; }
      var done = function () { button.textContent = "Copied"; button.classList.add("copied"); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () { field.select(); document.execCommand("copy"); done(); });
      } else {
        field.select();
        document.execCommand("copy");
        done();
      }
    });
  });
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) { event.preventDefault(); }
    });
  });
});
