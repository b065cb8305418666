// The live part of the dashboard: the server sends the sections' HTML on
// every change ("view", which carries that clock's time too), its clock
// every second ("tick") and the connection part every second ("state");
// offers count down on that clock, so a fast or fake clock counts the same
// here. An offer waiting on a person is answered with its buttons or the
// keys Y and N (the banner's first offer, the nearest deadline), while the
// page's title flashes and, when asked for, a tone sounds.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var state = document.getElementById("state");
  var clock = document.getElementById("clock");
  var notice = document.getElementById("notice");
  var sound = document.getElementById("sound");
  var title = document.title;
  var now = 0;
  var heard = {}; // offers a tone has sounded for
  var flash = 0;
  var nyTime = new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });

  // readNow takes the service's time from the view just shown.
  function readNow() {
    var at = live.querySelector("[data-now]");
    if (at) now = Number(at.dataset.now);
  }

  function showClock() {
    if (now) clock.textContent = nyTime.format(new Date(now));
  }

  function countDown() {
    var spans = live.querySelectorAll(".countdown");
    for (var i = 0; i < spans.length; i++) {
      var left = Math.max(0, Math.floor((Number(spans[i].dataset.expires) - now) / 1000));
      spans[i].textContent = left + "s";
    }
  }

  function offers() { return live.querySelectorAll(".offer"); }

  // announce flashes the title while an offer waits and sounds a tone once
  // for each new offer when sound is on.
  function announce() {
    var list = offers();
    if (list.length === 0) {
      clearInterval(flash);
      flash = 0;
      document.title = title;
      return;
    }
    var first = list[0];
    var words = "OFFER " + first.dataset.symbol + " " + first.dataset.shares + " @ " + first.dataset.price;
    if (!flash) {
      var on = false;
      flash = setInterval(function () {
        var o = offers()[0];
        if (!o) return;
        on = !on;
        var left = o.querySelector(".countdown");
        document.title = on ? "\u25cf " + words + " \u00b7 " + (left ? left.textContent : "") : title;
      }, 700);
    }
    for (var i = 0; i < list.length; i++) {
      var id = list[i].dataset.id;
      if (!heard[id]) {
        heard[id] = true;
        if (sound.checked) tone();
      }
    }
  }

  function tone() {
    var Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) return;
    var ctx = new Ctx();
    var osc = ctx.createOscillator();
    var gain = ctx.createGain();
    osc.frequency.value = 880;
    gain.gain.value = 0.15;
    osc.connect(gain);
    gain.connect(ctx.destination);
    osc.start();
    osc.stop(ctx.currentTime + 0.25);
    osc.onended = function () { ctx.close(); };
  }

  sound.checked = localStorage.getItem("locator-sound") === "on";
  sound.addEventListener("change", function () {
    localStorage.setItem("locator-sound", sound.checked ? "on" : "off");
    if (sound.checked) tone();
  });

  function say(msg, ok) {
    notice.textContent = msg;
    notice.className = ok ? "notice ok" : "notice";
    notice.hidden = false;
  }

  // Every action goes without leaving the page (the stream shows what
  // follows); without this script the form posts and the server shows the
  // page again.
  live.addEventListener("submit", function (e) {
    var form = e.target;
    e.preventDefault();
    var buttons = form.querySelectorAll("button");
    for (var i = 0; i < buttons.length; i++) buttons[i].disabled = true;
    var body = new URLSearchParams(new FormData(form));
    if (e.submitter && e.submitter.name) body.set(e.submitter.name, e.submitter.value); // the button pressed
    fetch(form.action, {
      method: "POST",
      headers: { "Accept": "application/json" },
      body: body,
    }).then(function (resp) {
      if (resp.ok) {
        notice.hidden = true;
        if (form.classList.contains("locate-form")) form.reset();
        return resp.json().then(function (r) { if (r.done) say(r.done, true); });
      }
      return resp.text().then(function (msg) { throw new Error(msg.trim()); });
    }).catch(function (err) {
      say(err.message || "the dashboard did not answer", false);
    }).then(function () {
      for (var i = 0; i < buttons.length; i++) buttons[i].disabled = false;
    });
  });

  // Y and N answer the first offer, unless a person is typing in a field.
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    var key = e.key.toLowerCase();
    if (key !== "y" && key !== "n") return;
    var o = offers()[0];
    if (!o) return;
    var button = o.querySelector(key === "y" ? "button.approve" : "button.decline");
    if (!button || button.disabled) return;
    e.preventDefault();
    o.querySelector("form").requestSubmit(button);
  });

  var events = new EventSource("/events");
  events.addEventListener("view", function (e) {
    live.innerHTML = e.data;
    readNow();
    showClock();
    countDown();
    announce();
  });
  events.addEventListener("tick", function (e) {
    now = Number(e.data);
    showClock();
    countDown();
  });
  events.addEventListener("state", function (e) {
    state.innerHTML = e.data;
  });
  events.onerror = function () {
    // The page lost its own stream: nothing it shows is current.
    state.innerHTML = '<span id="status" class="status bad">dashboard unreachable: reconnecting\u2026</span>';
  };
  readNow();
  announce();
})();
