private import CYAML

/// A parsed YAML document as a tree, with the position of every node (for error messages).
///
/// Only what configuration files need: mappings, sequences and scalars. Anchors/aliases and tags are refused.
public indirect enum YAMLNode: Sendable, Equatable {
    case scalar(String, plain: Bool, Mark)
    case mapping([(key: String, keyMark: Mark, value: YAMLNode)], Mark)
    case sequence([YAMLNode], Mark)
    case null(Mark)

    /// A 1-based position in the source text.
    public struct Mark: Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var column: Int
        public var description: String { "line \(line), column \(column)" }
    }

    /// Where this node starts.
    public var mark: Mark {
        switch self {
        case .scalar(_, _, let mark), .mapping(_, let mark), .sequence(_, let mark), .null(let mark): mark
        }
    }

    public static func == (lhs: YAMLNode, rhs: YAMLNode) -> Bool {
        switch (lhs, rhs) {
        case let (.scalar(a, pa, ma), .scalar(b, pb, mb)): a == b && pa == pb && ma == mb
        case let (.sequence(a, ma), .sequence(b, mb)): a == b && ma == mb
        case let (.null(a), .null(b)): a == b
        case let (.mapping(a, ma), .mapping(b, mb)):
            ma == mb && a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }
}

/// A YAML syntax error with its position.
public struct YAMLSyntaxError: Error, Sendable, Equatable {
    public var problem: String
    public var mark: YAMLNode.Mark
}

extension YAMLNode {
    /// Parses one YAML document with libyaml. An empty document yields `.null`.
    public static func parse(_ text: String) throws(YAMLSyntaxError) -> YAMLNode {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw YAMLSyntaxError(problem: "cannot initialise the YAML parser", mark: Mark(line: 1, column: 1))
        }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer throws(YAMLSyntaxError) -> YAMLNode in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var builder = Builder()
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    let problem = parser.problem.map { String(cString: $0) } ?? "invalid YAML"
                    let mark = Mark(line: Int(parser.problem_mark.line) + 1, column: Int(parser.problem_mark.column) + 1)
                    throw YAMLSyntaxError(problem: problem, mark: mark)
                }
                defer { yaml_event_delete(&event) }
                let mark = Mark(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
                if let done = try builder.consume(event, mark: mark) { return done }
            }
        }
    }

    /// Folds libyaml's event stream into a tree.
    private struct Builder {
        private enum Frame {
            case mapping([(key: String, keyMark: Mark, value: YAMLNode)], pendingKey: (String, Mark)?, Mark)
            case sequence([YAMLNode], Mark)
        }
        private var stack: [Frame] = []
        private var root: YAMLNode?

        mutating func consume(_ event: yaml_event_t, mark: Mark) throws(YAMLSyntaxError) -> YAMLNode? {
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return root ?? .null(mark)
            case YAML_DOCUMENT_END_EVENT:
                return root ?? .null(mark)
            case YAML_ALIAS_EVENT:
                throw YAMLSyntaxError(problem: "anchors and aliases are not supported in config files", mark: mark)
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                try refuse(anchor: scalar.anchor, tag: scalar.tag, mark: mark)
                let value = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                let plain = scalar.style == YAML_PLAIN_SCALAR_STYLE
                try add(.scalar(value, plain: plain, mark), mark: mark)
            case YAML_MAPPING_START_EVENT:
                try refuse(anchor: event.data.mapping_start.anchor, tag: event.data.mapping_start.tag, mark: mark)
                stack.append(.mapping([], pendingKey: nil, mark))
            case YAML_SEQUENCE_START_EVENT:
                try refuse(anchor: event.data.sequence_start.anchor, tag: event.data.sequence_start.tag, mark: mark)
                stack.append(.sequence([], mark))
            case YAML_MAPPING_END_EVENT, YAML_SEQUENCE_END_EVENT:
                guard let frame = stack.popLast() else { break }
                switch frame {
                case .mapping(let entries, _, let start): try add(.mapping(entries, start), mark: start)
                case .sequence(let items, let start): try add(.sequence(items, start), mark: start)
                }
            default:
                break
            }
            return nil
        }

        /// Anchors (`&a`) only exist to be aliased, and tags (`!!str`) change how a value is read: neither belongs in
        /// a config file, so both are refused where they appear.
        private func refuse(anchor: UnsafeMutablePointer<yaml_char_t>?, tag: UnsafeMutablePointer<yaml_char_t>?,
                            mark: Mark) throws(YAMLSyntaxError) {
            if anchor != nil {
                throw YAMLSyntaxError(problem: "anchors and aliases are not supported in config files", mark: mark)
            }
            if tag != nil {
                throw YAMLSyntaxError(problem: "tags are not supported in config files", mark: mark)
            }
        }

        private mutating func add(_ node: YAMLNode, mark: Mark) throws(YAMLSyntaxError) {
            guard let top = stack.popLast() else {
                if case .scalar(let value, true, _) = node, value.isEmpty || value == "~" || value == "null" {
                    root = .null(mark)
                } else {
                    root = node
                }
                return
            }
            switch top {
            case .sequence(var items, let start):
                items.append(node)
                stack.append(.sequence(items, start))
            case .mapping(var entries, let pending, let start):
                if let (key, keyMark) = pending {
                    if entries.contains(where: { $0.key == key }) {
                        throw YAMLSyntaxError(problem: "duplicate key '\(key)'", mark: keyMark)
                    }
                    entries.append((key, keyMark, node))
                    stack.append(.mapping(entries, pendingKey: nil, start))
                } else {
                    guard case .scalar(let key, _, _) = node else {
                        throw YAMLSyntaxError(problem: "mapping keys must be plain strings", mark: mark)
                    }
                    stack.append(.mapping(entries, pendingKey: (key, mark), start))
                }
            }
        }
    }
}
