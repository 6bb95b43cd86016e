/**
 * The console's one script, served as a file (the pages' policy allows no inline script): on a run's
 * page it listens to the run's event stream and redraws the page's live part as events come, the
 * whole page once the run has ended. Without it the pages are complete; they are only not live.
 * @module
 */

/** The source of `/console/console.js`. @internal */
export const CONSOLE_SCRIPT = `'use strict';
(function () {
  var live = document.getElementById('run-live');
  if (!live || live.getAttribute('data-run-final') === 'true' || typeof EventSource !== 'function') return;
  var source = new EventSource(live.getAttribute('data-run-events'));
  var timer = null;
  var ended = false;
  function redraw(whole) {
    fetch(window.location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' })
      .then(function (answer) { return answer.ok ? answer.text() : null; })
      .then(function (text) {
        if (text === null) return;
        var page = new DOMParser().parseFromString(text, 'text/html');
        var target = whole ? document.querySelector('main') : document.getElementById('run-live');
        var fresh = whole ? page.querySelector('main') : page.getElementById('run-live');
        if (target && fresh) target.innerHTML = fresh.innerHTML;
        if (whole) document.title = page.title;
      })
      .catch(function () {});
  }
  source.onmessage = function (message) {
    var event;
    try { event = JSON.parse(message.data); } catch (error) { return; }
    if (event.type === 'run.finished') {
      ended = true;
      source.close();
      clearTimeout(timer);
      redraw(true);
      return;
    }
    clearTimeout(timer);
    timer = setTimeout(function () { redraw(false); }, 250);
  };
  source.onerror = function () {
    if (ended) source.close();
  };
})();
`;
