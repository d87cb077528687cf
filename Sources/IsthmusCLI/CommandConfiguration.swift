/// Describes a (sub)command for parsing and help, in the shape of swift-argument-parser's `CommandConfiguration`.
public struct CommandConfiguration: Sendable {
    /// A named option of the command (global options are added by the parser).
    public struct Option: Sendable {
        public var long: String
        public var short: Character?
        /// The value's placeholder (`<file>`); nil for a flag.
        public var valueName: String?
        public var help: String

        public init(long: String, short: Character? = nil, valueName: String? = nil, help: String) {
            self.long = long
            self.short = short
            self.valueName = valueName
            self.help = help
        }
    }

    /// A positional argument.
    public struct Argument: Sendable {
        public var name: String
        public var help: String
        public init(name: String, help: String) {
            self.name = name
            self.help = help
        }
    }

    public var name: String
    public var abstract: String
    public var discussion: String?
    public var arguments: [Argument]
    public var options: [Option]

    public init(name: String, abstract: String, discussion: String? = nil, arguments: [Argument] = [], options: [Option] = []) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
    }

    /// The one-line usage, e.g. `isthmus link [--config <file>] <matrix-room> <muc-jid>`.
    public var usage: String {
        var parts = ["isthmus", name, "[--config <file>]"]
        for option in options {
            parts.append(option.valueName.map { "[--\(option.long) \($0)]" } ?? "[--\(option.long)]")
        }
        parts += arguments.map { "<\($0.name)>" }
        return parts.joined(separator: " ")
    }
}
