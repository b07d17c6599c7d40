// The developer console: signs in, then shows providers (the per-device toggle), live sessions,
// stored conversations and test recordings. Everything it shows comes from the same HTTP API a
// script would call, with the signed-in credential.
import { APIError, api, credential } from "./api.js";
import { ConversationsTab } from "./conversations-tab.js";
import { LiveTab } from "./live-tab.js";
import { ProvidersTab } from "./providers-tab.js";
import { TestTab } from "./test-tab.js";

const state = { me: null, providers: [] };
const tabs = {};
let current = "providers";

async function signIn() {
  try {
    state.me = await api.get("/v1/whoami");
  } catch (error) {
    if (error instanceof APIError && error.status === 401) return showSignIn(credential.get() ? "That credential was refused." : "");
    return showSignIn(`The server did not answer: ${error.message}`);
  }
  state.providers = (await api.get("/v1/providers")).providers;
  document.getElementById("signin").hidden = true;
  document.getElementById("tabs").hidden = false;
  document.getElementById("main").hidden = false;
  const who = document.getElementById("who");
  who.textContent = state.me.role === "admin" ? (state.me.auth === "off" ? "no sign-in needed (auth off)" : "admin") : `device ${state.me.device_id}`;
  if (state.me.auth !== "off") {
    const out = document.createElement("button");
    out.textContent = "Sign out";
    out.onclick = () => { credential.clear(); location.reload(); };
    who.append(out);
  }
  tabs.providers = new ProvidersTab(state);
  tabs.live = new LiveTab(state);
  tabs.conversations = new ConversationsTab(state);
  tabs.test = new TestTab(state);
  for (const button of document.querySelectorAll("#tabs button")) button.onclick = () => show(button.dataset.tab);
  await show(location.hash.slice(1) in tabs ? location.hash.slice(1) : "providers");
  setInterval(() => tabs.live.refresh(current === "live"), 1000);
  document.body.dataset.ready = "true";
}

async function show(name) {
  current = name;
  location.hash = name;
  for (const button of document.querySelectorAll("#tabs button")) button.classList.toggle("active", button.dataset.tab === name);
  for (const section of document.querySelectorAll("main .tab")) section.hidden = section.id !== `tab-${name}`;
  if (name === "live") await tabs.live.refresh(true);
  else await tabs[name].show();
}

function showSignIn(message) {
  document.getElementById("signin").hidden = false;
  document.getElementById("signin-error").textContent = message;
  document.getElementById("signin-form").onsubmit = (event) => {
    event.preventDefault();
    credential.set(document.getElementById("signin-token").value.trim());
    signIn();
  };
}

signIn();
