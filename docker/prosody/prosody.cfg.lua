-- Prosody 0.12 for docker/compose.yaml (mounted at /etc/prosody/prosody.cfg.lua). The same shape as scripts/testbed:
-- a host, a MUC service with archives, and the bridge as an external component (XEP-0114).

-- The bridge's component secret, from the compose secret (a file; its first line is the secret).
local function secret(name)
  local path = "/run/secrets/" .. name
  local file, problem = io.open(path)
  if not file then error("cannot read the secret " .. path .. ": " .. tostring(problem), 0) end
  local value = file:read("*l")
  file:close()
  if not value or value == "" then error("the secret " .. path .. " is empty", 0) end
  return value
end

log = { { levels = { min = "info" }, to = "console" } }
data_path = "/var/lib/prosody"
pidfile = "/var/run/prosody/prosody.pid"

modules_enabled = {
  "roster"; "saslauth"; "tls"; "disco"; "carbons"; "pep"; "private"; "blocklist";
  "vcard4"; "vcard_legacy"; "version"; "uptime"; "time"; "ping"; "smacks"; "mam";
}
modules_disabled = { "s2s" }   -- no federation in this stack

-- Clients connect from the host through the port published on 127.0.0.1 only. For a trial without certificates
-- plaintext logins are allowed; for real use, give Prosody certificates (certificates = "certs") and delete both lines.
c2s_require_encryption = false
allow_unencrypted_plain_auth = true
authentication = "internal_hashed"
storage = "internal"

-- The bridge connects from the isthmus container: listen on all interfaces of this container (the component
-- port is not published outside the compose network).
component_ports = { 5347 }
component_interfaces = { "*" }

VirtualHost "localhost"

Component "conference.localhost" "muc"
  modules_enabled = { "muc_mam" }
  muc_room_default_persistent = true

-- The bridge (xmpp.component_domain in isthmus/config.yaml).
Component "bridge.localhost"
  component_secret = secret("component_secret")
  -- A restarted bridge replaces a half-dead connection of its predecessor.
  component_conflict_resolve = "kick_old"
