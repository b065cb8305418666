// The live part of the dashboard: the server sends the sections' HTML on
// every change ("view", which carries that clock's time too) and its
// clock every second ("tick"); offers count down on that clock, so a fast
// or fake clock counts the same here.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var status = document.getElementById("status");
  var now = 0;

  // readNow takes the service's time from the view just shown.
  function readNow() {
    var at = live.querySelector("[data-now]");
    if (at) now = Number(at.dataset.now);
  }
  readNow();

  function countDown() {
    var spans = live.querySelectorAll(".countdown");
    for (var i = 0; i < spans.length; i++) {
      var left = Math.max(0, Math.floor((Number(spans[i].dataset.expires) - now) / 1000));
      spans[i].textContent = left + "s";
    }
  }

  // Answers go without leaving the page (the stream shows what follows);
  // without this script the form posts and the server shows the page again.
  live.addEventListener("submit", function (e) {
    var form = e.target;
    e.preventDefault();
    var buttons = form.querySelectorAll("button");
    for (var i = 0; i < buttons.length; i++) buttons[i].disabled = true;
    var body = new URLSearchParams(new FormData(form));
    body.set(e.submitter.name, e.submitter.value); // the button pressed
    fetch(form.action, {
      method: "POST",
      headers: { "Accept": "application/json" },
      body: body,
    }).then(function (resp) {
      if (resp.ok) return;
      return resp.text().then(function (msg) {
        for (var i = 0; i < buttons.length; i++) buttons[i].disabled = false;
        status.textContent = msg.trim();
        status.className = "status bad";
      });
    });
  });

  var events = new EventSource("/events");
  events.addEventListener("view", function (e) {
    live.innerHTML = e.data;
    readNow();
    countDown();
  });
  events.addEventListener("tick", function (e) {
    now = Number(e.data);
    countDown();
  });
  events.onopen = function () {
    status.textContent = "live";
    status.className = "status ok";
  };
  events.onerror = function () {
    status.textContent = "reconnecting…";
    status.className = "status bad";
  };
})();
