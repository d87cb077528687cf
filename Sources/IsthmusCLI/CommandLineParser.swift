import IsthmusCommon

/// Splits a command line into global options, a subcommand and its arguments. Pure.
///
/// Global options (`-c/--config`, `--log-level`, `--help`, `--version`) are accepted before or after the subcommand;
/// `--opt=value` and `--opt value` both work; `--` ends option parsing.
enum CommandLineParser {
    struct GlobalOptions: Sendable {
        var configPath: String?
        var logLevel: Logger.Level?
    }

    enum Invocation {
        case help((any Subcommand.Type)?)
        case version
        case run(any Subcommand.Type, ParsedArguments, GlobalOptions)
    }

    static func parse(_ arguments: [String], subcommands: [any Subcommand.Type]) throws(UsageError) -> Invocation {
        var global = GlobalOptions()
        var command: (any Subcommand.Type)?
        var positionals: [String] = []
        var options: [String: String] = [:]
        var wantsHelp = false
        var wantsVersion = false
        var index = 0
        var onlyPositionals = false

        /// The value of the option at `index` (inline after `=`, else the next argument), as spelled on the command line.
        func value(placeholder: String, inline: String?) throws(UsageError) -> String {
            let spelled = arguments[index].split(separator: "=", maxSplits: 1)[0]
            let missing = UsageError("Missing value for '\(spelled) \(placeholder)'.", command: command?.configuration.name)
            if let inline {
                guard !inline.isEmpty else { throw missing }
                return inline
            }
            guard index + 1 < arguments.count else { throw missing }
            index += 1
            return arguments[index]
        }

        while index < arguments.count {
            let argument = arguments[index]
            defer { index += 1 }
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                if command == nil && !onlyPositionals {
                    if argument == "help" {
                        wantsHelp = true
                        continue
                    }
                    guard let found = subcommands.first(where: { $0.configuration.name == argument }) else {
                        throw UsageError("Unknown subcommand '\(argument)'.")
                    }
                    command = found
                } else {
                    positionals.append(argument)
                }
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name: String
            var inline: String?
            if argument.hasPrefix("--") {
                name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
            } else {
                let short = argument.dropFirst()
                switch short {
                case "c": name = "config"
                case "h": name = "help"
                default:
                    throw UsageError("Unknown option '\(argument)'.", command: command?.configuration.name)
                }
            }
            switch name {
            case "help":
                wantsHelp = true
            case "version":
                wantsVersion = true
            case "config":
                global.configPath = try value(placeholder: "<file>", inline: inline)
            case "log-level":
                let text = try value(placeholder: "<level>", inline: inline)
                guard let level = Logger.Level(name: text) else {
                    throw UsageError("Invalid log level '\(text)'.", command: command?.configuration.name)
                }
                global.logLevel = level
            default:
                guard let option = command?.configuration.options.first(where: { $0.long == name }) else {
                    throw UsageError("Unknown option '--\(name)'.", command: command?.configuration.name)
                }
                if let placeholder = option.valueName {
                    options[name] = try value(placeholder: placeholder, inline: inline)
                } else {
                    guard inline == nil else {
                        throw UsageError("Option '--\(name)' takes no value.", command: command?.configuration.name)
                    }
                    options[name] = "true"
                }
            }
        }
        if wantsHelp {
            if command == nil, let topic = positionals.first {
                guard let found = subcommands.first(where: { $0.configuration.name == topic }) else {
                    throw UsageError("Unknown subcommand '\(topic)'.")
                }
                return .help(found)
            }
            return .help(command)
        }
        if wantsVersion { return .version }
        guard let command else { throw UsageError("Missing subcommand.") }
        return .run(command, ParsedArguments(positionals: positionals, options: options), global)
    }
}
