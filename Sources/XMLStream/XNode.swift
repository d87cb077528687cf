/// One child of an ``XElement``: an element or a run of character data.
public enum XNode: Sendable, Hashable {
    case element(XElement)
    /// Character data, unescaped (entities already resolved).
    case text(String)
}
