// The raw protocol of a live session, as the page's own WebSocket sends and receives it: every JSON
// message with its time since the session opened, filterable by type, newest at the bottom. Audio
// frames (ten a second) are counted rather than listed, so they never push the messages out.

/// Enough to read a whole session of a few minutes; older messages are dropped past it.
const maxEntries = 2000;

function element(name, className, text) {
  const node = document.createElement(name);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class ProtocolLog {
  constructor(container) {
    this.container = container;
    this.filter = element("select", "protocol-filter");
    this.filter.setAttribute("aria-label", "message type");
    this.filter.onchange = () => this.render();
    this.direction = element("select", "protocol-direction");
    this.direction.setAttribute("aria-label", "direction");
    this.direction.append(new Option("sent and received", ""), new Option("sent only", "sent"), new Option("received only", "received"));
    this.direction.onchange = () => this.render();
    const clear = element("button", "", "Clear");
    clear.type = "button";
    clear.onclick = () => this.reset();
    this.audio = element("span", "protocol-audio muted");
    const toolbar = element("div", "row protocol-toolbar");
    toolbar.append(this.filter, this.direction, clear, this.audio);
    this.list = element("div", "protocol-entries");
    this.list.setAttribute("role", "log");
    container.replaceChildren(toolbar, this.list);
    this.reset();
  }

  reset() {
    this.entries = [];
    this.types = new Set();
    this.began = null;
    this.frames = { sent: 0, bytes: 0 };
    this.refreshTypes();
    this.list.replaceChildren();
    this.showAudio();
  }

  /// `direction`: "sent" or "received"; `message`: the parsed JSON object, or an ArrayBuffer (audio).
  add(direction, message) {
    this.began ??= performance.now();
    if (message instanceof ArrayBuffer) {
      this.frames.sent += 1;
      this.frames.bytes += message.byteLength;
      this.showAudio();
      return;
    }
    const entry = { direction, type: message?.type ?? "(no type)", message, at: performance.now() - this.began, wall: new Date() };
    this.entries.push(entry);
    if (this.entries.length > maxEntries) {
      this.entries.shift();
      this.list.firstChild?.remove();
    }
    if (!this.types.has(entry.type)) { this.types.add(entry.type); this.refreshTypes(); }
    if (this.passes(entry)) this.append(entry);
  }

  passes(entry) {
    return (!this.filter.value || entry.type === this.filter.value) && (!this.direction.value || entry.direction === this.direction.value);
  }

  render() {
    this.list.replaceChildren();
    for (const entry of this.entries) if (this.passes(entry)) this.append(entry);
  }

  append(entry) {
    // Follow the newest only while the reader is at the bottom: scrolling up to read stops it.
    const atBottom = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 4;
    const row = element("div", `log-entry ${entry.direction}`);
    row.dataset.type = entry.type;
    row.dataset.direction = entry.direction;
    const time = element("span", "log-time", `+${(entry.at / 1000).toFixed(3)} s`);
    time.title = entry.wall.toISOString();
    const arrow = element("span", "log-direction", entry.direction === "sent" ? "→ sent" : "← received");
    const type = element("span", "log-type", entry.type);
    const text = JSON.stringify(entry.message);
    const json = element("code", "log-json", text.length > 240 ? text.slice(0, 240) + " …" : text);
    // A click shows the whole message, indented.
    row.onclick = () => {
      row.classList.toggle("expanded");
      json.textContent = row.classList.contains("expanded") ? JSON.stringify(entry.message, null, 2) : (text.length > 240 ? text.slice(0, 240) + " …" : text);
    };
    row.append(time, arrow, type, json);
    this.list.append(row);
    if (atBottom) this.list.scrollTop = this.list.scrollHeight;
  }

  refreshTypes() {
    const chosen = this.filter.value;
    this.filter.replaceChildren(new Option("all types", ""), ...[...this.types].sort().map((type) => new Option(type, type)));
    this.filter.value = this.types.has(chosen) ? chosen : "";
  }

  showAudio() {
    this.audio.textContent = `audio sent: ${this.frames.sent} binary frames, ${(this.frames.bytes / 1024).toFixed(0)} KiB`;
  }
}
