// The bridge drives the client link through these types: one `import XMPPClient` brings the stanza model along.
@_exported import XMLStream
@_exported import XMPP
