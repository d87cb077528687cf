// XMPPComponent module (being built).
