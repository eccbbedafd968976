// vmine static site: filter the error list as you type, and copy code blocks.
// Works from file:// and any static host: the index is embedded in the page, nothing is fetched.
(function () {
  "use strict";

  function setupSearch() {
    var box = document.getElementById("search");
    var data = document.getElementById("error-index");
    if (!box || !data) return;
    var records = JSON.parse(data.textContent);
    var haystacks = {};
    records.forEach(function (r) {
      haystacks[r.id] = [r.message, r.slug, r.file, r.qualname, (r.tags || []).join(" ")]
        .join(" \n ").toLowerCase();
    });
    var rows = Array.prototype.slice.call(document.querySelectorAll("#errors tbody tr[data-id]"));
    var groups = Array.prototype.slice.call(document.querySelectorAll("#errors tbody"));
    var count = document.getElementById("count");
    var empty = document.getElementById("no-results");

    function apply() {
      var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      rows.forEach(function (row) {
        var hay = haystacks[row.getAttribute("data-id")] || "";
        var keep = words.every(function (w) { return hay.indexOf(w) !== -1; });
        row.hidden = !keep;
        if (keep) shown += 1;
      });
      groups.forEach(function (group) {
        var visible = group.querySelector("tr[data-id]:not([hidden])");
        group.hidden = !visible;
      });
      count.textContent = shown + " of " + rows.length + " errors";
      empty.hidden = shown !== 0;
    }

    box.addEventListener("input", apply);
    var params = new URLSearchParams(window.location.search);
    if (params.get("q")) box.value = params.get("q");
    apply();
  }

  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.top = "-1000px";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }

  function setupCopy() {
    document.querySelectorAll("button.copy").forEach(function (button) {
      button.addEventListener("click", function () {
        var block = button.closest(".code-block");
        var pre = block.querySelector("td.code pre") || block.querySelector("pre");
        var text = pre.textContent.replace(/\n$/, "");
        function done(ok) {
          button.textContent = ok ? "Copied" : "Copy failed";
          window.setTimeout(function () { button.textContent = "Copy"; }, 1500);
        }
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(text).then(function () { done(true); },
            function () { done(fallbackCopy(text)); });
        } else {
          done(fallbackCopy(text));
        }
      });
    });
  }

  setupSearch();
  setupCopy();
})();
