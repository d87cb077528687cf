// The bridge drives the component through these types: one `import XMPPComponent` brings the stanza model
// (`XMPP`) and the element type its extensions use (`XMLStream.XElement`) along.
@_exported import XMLStream
@_exported import XMPP
