/// Collects the lines of an XEP-0393 body while the HTML is walked: collapses white space as a browser does, merges
/// block breaks so no blank line is doubled or dangling, and keeps span styles per line (XEP-0393 "Business Rules ›
/// Spans": spans never cross a line, so a style open at a line break is closed there and reopened on the next line).
/// Pure value.
struct StyledLineBuilder {
    /// How far apart the next content must be from the previous one.
    enum Break: Int, Comparable {
        case none, line, paragraph

        static func < (lhs: Break, rhs: Break) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// One line of output before it is rendered.
    struct Line {
        enum Content {
            /// Text and span boundaries, rendered by ``InlineRenderer``; empty for a blank line.
            case inline([InlineToken])
            /// A line of a preformatted block (or its "```" fences), written as is.
            case verbatim(String)
        }

        /// Number of enclosing quotations (`> ` prefixes); blank lines get theirs when the body is assembled.
        var quoteDepth: Int
        /// Indentation and list marker, after the quote prefix.
        var lead: String
        var content: Content

        var isBlank: Bool {
            if case .inline(let tokens) = content { return tokens.isEmpty }
            return false
        }
    }

    /// How many `> ` a line gets at most, however deep its quotations are nested (what ``StylingParser`` reads back).
    static let maximumQuoteDepth = StylingParser.maximumQuoteDepth

    /// Quotation depth applied to lines started from now on (written as at most ``maximumQuoteDepth`` levels).
    var quoteDepth = 0
    /// Indentation (in spaces) of continuation lines started from now on.
    var indent = 0
    /// A list marker and its column, waiting for the first content of the next line.
    var pendingMarker: (column: Int, marker: String)?

    private var lines: [Line] = []
    private var tokens: [InlineToken] = []
    private var text = ""
    private var lineStarted = false
    private var lineQuoteDepth = 0
    private var lineLead = ""
    private var hasContent = false
    private var newlinesSinceContent = 0
    private var pendingBreak = Break.none
    private var pendingSpace = false
    private var styles: [SpanStyle] = []
    /// How many of `styles` (from the bottom) have an `.open` token on the current line.
    private var openedOnLine = 0

    /// Whether a preformatted span is open (nothing else may open inside it).
    var isInCode: Bool { styles.contains(.code) }

    /// Appends text, collapsing runs of HTML white space to one space and dropping it at line ends.
    mutating func append(_ string: String) {
        for scalar in string.unicodeScalars {
            if scalar.isHTMLWhitespace {
                if lineStarted { pendingSpace = true }
            } else {
                if pendingBreak != .none || !lineStarted || pendingSpace || openedOnLine < styles.count {
                    prepareForContent()
                }
                text.unicodeScalars.append(scalar)
            }
        }
    }

    /// Appends a separator (a table cell's tab) that is kept as is, unless the line is still empty.
    mutating func appendSeparator(_ separator: String) {
        guard lineStarted else { return }
        pendingSpace = false
        text += separator
    }

    /// Asks for at least `kind` of separation before the next content.
    mutating func requestBreak(_ kind: Break) {
        pendingBreak = max(pendingBreak, kind)
    }

    /// `<br>`: ends the current line now, even an empty one (but never before the first content).
    mutating func lineBreak() {
        guard hasContent else { return }
        newline()
    }

    /// Opens `style` for the text that follows; false (and nothing to close) when it is already open or a
    /// preformatted span is open.
    mutating func push(_ style: SpanStyle) -> Bool {
        guard !styles.contains(style), !isInCode else { return false }
        styles.append(style)
        return true
    }

    /// Closes the innermost style; a style that received no content on this line leaves no directive.
    mutating func pop() {
        if openedOnLine == styles.count {
            appendToken(.close(styles[styles.count - 1]))
            openedOnLine -= 1
        }
        styles.removeLast()
    }

    /// A preformatted block: "```", its lines verbatim, "```" (XEP-0393 "Business Rules › Blocks › Preformatted
    /// Text"), separated from its neighbours as a paragraph.
    mutating func appendPreformatted(_ content: String) {
        requestBreak(.paragraph)
        guard !content.isEmpty else { return }
        applyPendingBreak()
        if lineStarted { newline() }
        var body = content.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while body.last?.isEmpty == true { body.removeLast() }
        for text in ["```"] + body + ["```"] {
            lines.append(Line(quoteDepth: min(quoteDepth, Self.maximumQuoteDepth), lead: "", content: .verbatim(text)))
        }
        hasContent = true
        newlinesSinceContent = 1
        requestBreak(.paragraph)
    }

    /// The finished body: lines joined by "\n", no blank line at either end, blank lines inside quotations prefixed.
    mutating func finish() -> String {
        if lineStarted { newline() }
        while lines.last?.isBlank == true { lines.removeLast() }
        // A blank line stays inside the quotations that both of its neighbours are in.
        var depths = lines.map(\.quoteDepth)
        var nextDepth = 0
        for index in lines.indices.reversed() {
            if lines[index].isBlank { depths[index] = nextDepth } else { nextDepth = lines[index].quoteDepth }
        }
        var previousDepth = 0
        for index in lines.indices {
            if lines[index].isBlank {
                depths[index] = min(previousDepth, depths[index])
            } else {
                previousDepth = lines[index].quoteDepth
            }
        }
        var output: [String] = []
        output.reserveCapacity(lines.count)
        for (line, depth) in zip(lines, depths) {
            let quote = String(repeating: "> ", count: depth)
            switch line.content {
            case .inline(let tokens) where tokens.isEmpty:
                output.append(String(quote.dropLast()))
            case .inline(let tokens):
                output.append(quote + line.lead + InlineRenderer.render(tokens))
            case .verbatim(let text):
                output.append(quote + text)
            }
        }
        return output.joined(separator: "\n")
    }

    // MARK: Lines

    /// Before a visible character: the pending break, the line's prefix, a collapsed space, the styles' openings.
    private mutating func prepareForContent() {
        applyPendingBreak()
        if !lineStarted {
            lineStarted = true
            lineQuoteDepth = min(quoteDepth, Self.maximumQuoteDepth)
            if let marker = pendingMarker {
                lineLead = String(repeating: " ", count: marker.column) + marker.marker
                pendingMarker = nil
            } else {
                lineLead = String(repeating: " ", count: indent)
            }
            pendingSpace = false
        }
        if pendingSpace {
            text += " "
            pendingSpace = false
        }
        while openedOnLine < styles.count {
            appendToken(.open(styles[openedOnLine]))
            openedOnLine += 1
        }
        hasContent = true
        newlinesSinceContent = 0
    }

    private mutating func applyPendingBreak() {
        defer { pendingBreak = .none }
        guard hasContent else { return }
        let needed = pendingBreak == .paragraph ? 2 : pendingBreak == .line ? 1 : 0
        while newlinesSinceContent < needed { newline() }
    }

    /// Ends the current line (closing its open spans) and starts an empty one.
    private mutating func newline() {
        for index in (0..<openedOnLine).reversed() { appendToken(.close(styles[index])) }
        openedOnLine = 0
        flushText()
        lines.append(Line(quoteDepth: lineQuoteDepth, lead: lineLead, content: .inline(tokens)))
        tokens = []
        lineStarted = false
        lineQuoteDepth = 0
        lineLead = ""
        pendingSpace = false
        newlinesSinceContent += 1
    }

    private mutating func appendToken(_ token: InlineToken) {
        flushText()
        tokens.append(token)
    }

    private mutating func flushText() {
        guard !text.isEmpty else { return }
        tokens.append(.text(text))
        text = ""
    }
}
