// The spec's toggle, made durable: every provider with what it is and how it measured, and the
// device's choice stored on the server (PUT /v1/devices/{id}/settings).
import { api } from "./api.js";

export class ProvidersTab {
  constructor(state) {
    this.state = state;
    this.cards = document.getElementById("provider-cards");
    this.deviceInput = document.getElementById("device-id");
    this.status = document.getElementById("device-status");
    document.getElementById("device-load").onclick = () => this.loadDevice();
  }

  async show() {
    if (this.state.me.device_id) {
      this.deviceInput.value = this.state.me.device_id;
      this.deviceInput.disabled = true;
    } else if (!this.deviceInput.value) {
      this.deviceInput.value = "console";
    }
    await this.loadDevice();
  }

  async loadDevice() {
    const device = this.deviceInput.value.trim();
    if (!device) return;
    try {
      this.settings = await api.get(`/v1/devices/${encodeURIComponent(device)}/settings`);
      this.status.textContent = this.describe();
    } catch (error) {
      this.settings = null;
      this.status.textContent = `settings unavailable: ${error.message}`;
    }
    this.render();
  }

  describe() {
    const s = this.settings;
    return s.provider ? `uses ${s.provider} (its setting)` : `no setting: uses the server default, ${s.effective_provider}`;
  }

  async choose(provider) {
    const device = this.deviceInput.value.trim();
    try {
      this.settings = await api.put(`/v1/devices/${encodeURIComponent(device)}/settings`, { provider });
      this.status.textContent = `saved · ${this.describe()}`;
    } catch (error) {
      this.status.textContent = `not saved: ${error.message}`;
    }
    this.render();
  }

  render() {
    const chosen = this.settings?.provider ?? null;
    const cards = this.state.providers.map((provider) => {
      const card = document.createElement("div");
      card.className = "card" + (provider.id === chosen ? " selected" : "") + (provider.available ? "" : " unavailable");
      card.dataset.provider = provider.id;
      const title = document.createElement("h3");
      title.textContent = `${provider.name} `;
      const id = document.createElement("code");
      id.textContent = provider.id;
      title.append(id);
      const description = document.createElement("p");
      description.textContent = provider.description;
      const facts = document.createElement("dl");
      const fact = (name, value) => {
        const dt = document.createElement("dt"); dt.textContent = name;
        const dd = document.createElement("dd"); dd.textContent = value || "—";
        facts.append(dt, dd);
      };
      fact("Latency", provider.latency_class);
      fact("Licence", provider.licence);
      fact("Measured", provider.measured);
      fact("Available", provider.available ? "yes" : `no: ${provider.unavailable_reason ?? "unknown"}`);
      const use = document.createElement("button");
      use.textContent = provider.id === chosen ? "This device's provider" : "Use for this device";
      use.disabled = provider.id === chosen || !this.settings;
      use.className = "use-provider";
      use.onclick = () => this.choose(provider.id);
      card.append(title, description, facts, use);
      return card;
    });
    const fallback = document.createElement("div");
    fallback.className = "card" + (chosen == null ? " selected" : "");
    fallback.dataset.provider = "";
    const title = document.createElement("h3");
    title.textContent = "Server default";
    const text = document.createElement("p");
    text.textContent = `No choice for this device: sessions get ${this.state.me.default_provider ?? "the server's default"}.`;
    const clear = document.createElement("button");
    clear.textContent = chosen == null ? "In use" : "Clear the device's choice";
    clear.disabled = chosen == null || !this.settings;
    clear.onclick = () => this.choose(null);
    fallback.append(title, text, clear);
    this.cards.replaceChildren(...cards, fallback);
  }
}
