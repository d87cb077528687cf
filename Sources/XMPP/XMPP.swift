// XMPP module (being built).
