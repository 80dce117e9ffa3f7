(function () {
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    var sort = cell.getAttribute("data-sort");
    return sort !== null ? sort : cell.textContent.trim();
  }
  function sortTable(table, index, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var numeric = rows.every(function (r) { var v = cellValue(r, index); return v === "" || !isNaN(parseFloat(v)); });
    rows.sort(function (a, b) {
      var x = cellValue(a, index), y = cellValue(b, index);
      var order = numeric ? (parseFloat(x || "0") - parseFloat(y || "0")) : x.localeCompare(y);
      return ascending ? order : -order;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var fragment = document.createDocumentFragment();
    rows.forEach(function (r) { fragment.appendChild(r); });
    body.appendChild(fragment);
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortTable(table, index, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortTable(table, index, th); } });
    });
  });
  var filter = document.getElementById("finding-filter");
  if (filter) {
    var table = document.getElementById("findings-table");
    var counter = document.getElementById("finding-count");
    filter.addEventListener("input", function () {
      var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      var shown = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var text = row.textContent.toLowerCase();
        var visible = words.every(function (w) { return text.indexOf(w) >= 0; });
        row.style.display = visible ? "" : "none";
        if (visible) { shown += 1; }
      });
      counter.textContent = String(shown);
    });
  }
})();
