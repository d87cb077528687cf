/// Renders `--help` text in swift-argument-parser's layout. Pure; asserted verbatim in tests.
enum HelpFormatter {
    static func help(for command: (any Subcommand.Type)?) -> String {
        guard let command else { return topLevel() }
        let configuration = command.configuration
        var text = "OVERVIEW: \(configuration.abstract)\n"
        if let discussion = configuration.discussion { text += "\n\(discussion)\n" }
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

    /// `  label   help`, with help aligned at column 26 (or on the next line for long labels).
    private static func row(_ label: String, _ help: String) -> String {
        let indent = String(repeating: " ", count: 26)
        let head = "  " + label
        if head.count < 24 {
            return head + String(repeating: " ", count: 26 - head.count) + help + "\n"
        }
        return head + "\n" + indent + help + "\n"
    }
}
