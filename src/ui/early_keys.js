// Keys before the wasm: a key press clicks the option whose data-keys
// names it, so the option's form posts the answer. Once the page has
// hydrated, the app's own handler (on window) takes over; the event is
// stopped here so the two never both answer one press. The options carry
// aria-keyshortcuts only where a script runs (here, then the app's): a page
// without JavaScript announces no key that does nothing.
(function () {
  var EARLY = 'section.survey form.options button[type="submit"][data-keys]';
  document.addEventListener("DOMContentLoaded", function () {
    var bs = document.querySelectorAll(EARLY);
    for (var i = 0; i < bs.length; i++) bs[i].setAttribute("aria-keyshortcuts", bs[i].getAttribute("data-keys"));
  });
  document.addEventListener("keydown", function (e) {
    if (document.querySelector('main[data-hydrated="true"]')) return;
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat || e.isComposing) return;
    var t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    var k = e.key.toLowerCase();
    var bs = document.querySelectorAll(EARLY);
    for (var i = 0; i < bs.length; i++) {
      if (bs[i].getAttribute("data-keys").toLowerCase().split(" ").indexOf(k) !== -1) {
        e.preventDefault();
        e.stopPropagation();
        var f = bs[i].form;
        if (!f.dataset.sent) {
          // One post per item: a second press while it is on its way is dropped.
          f.dataset.sent = "1";
          setTimeout(function () { delete f.dataset.sent; }, 5000);
          bs[i].click();
        }
        return;
      }
    }
  });
})();
