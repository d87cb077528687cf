/// Renders `--help` text in swift-argument-parser's layout, wrapped at 80 columns. Pure; asserted verbatim in tests.
enum HelpFormatter {
    /// Total width of help text.
    static let width = 80
    /// Column where option and subcommand help starts.
    static let helpColumn = 26

    static func help(for command: (any Subcommand.Type)?) -> String {
        guard let command else { return topLevel() }
        let configuration = command.configuration
        var text = "OVERVIEW: \(configuration.abstract)\n"
        if let discussion = configuration.discussion { text += "\n\(wrap(discussion, width: width).joined(separator: "\n"))\n" }
        text += "\nUSAGE: \(configuration.usage)\n"
        if !configuration.arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for argument in configuration.arguments { text += row("<\(argument.name)>", argument.help) }
        }
        text += "\nOPTIONS:\n"
        for option in configuration.options { text += row(label(option), option.help) }
        for option in IsthmusCommandLine.globalOptions { text += row(label(option), option.help) }
        text += row("-h, --help", "Show help information.")
        return String(text.dropLast())
    }

    static func topLevel() -> String {
        var text = "OVERVIEW: \(IsthmusCommandLine.abstract)\n\nUSAGE: \(IsthmusCommandLine.usage)\n\nOPTIONS:\n"
        for option in IsthmusCommandLine.globalOptions { text += row(label(option), option.help) }
        text += row("--version", "Show the version.")
        text += row("-h, --help", "Show help information.")
        text += "\nSUBCOMMANDS:\n"
        for command in IsthmusCommandLine.subcommands {
            text += row(command.configuration.name, command.configuration.abstract)
        }
        text += "\n  See 'isthmus help <subcommand>' for detailed help."
        return text
    }

    private static func label(_ option: CommandConfiguration.Option) -> String {
        var label = option.short.map { "-\($0), " } ?? ""
        label += "--\(option.long)"
        if let valueName = option.valueName { label += " \(valueName)" }
        return label
    }

    /// `  label   help`, with help aligned at ``helpColumn`` (or on the next line for long labels) and wrapped.
    private static func row(_ label: String, _ help: String) -> String {
        let indent = String(repeating: " ", count: helpColumn)
        let lines = wrap(help, width: width - helpColumn)
        let head = "  " + label
        var text: String
        var rest = lines[...]
        if head.count < helpColumn - 2 {
            text = head + String(repeating: " ", count: helpColumn - head.count) + (rest.popFirst() ?? "") + "\n"
        } else {
            text = head + "\n"
        }
        for line in rest { text += indent + line + "\n" }
        return text
    }

    /// Splits `text` into lines of at most `width` characters at spaces (a longer word gets a line of its own).
    /// Line breaks in `text` are kept.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var current = ""
            for word in paragraph.split(separator: " ") {
                if current.isEmpty {
                    current = String(word)
                } else if current.count + 1 + word.count <= width {
                    current += " " + word
                } else {
                    lines.append(current)
                    current = String(word)
                }
            }
            lines.append(current)
        }
        return lines
    }
}
