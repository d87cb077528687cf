/// One piece of a line before rendering: text, or where a span style opens or closes. Opens and closes are balanced
/// on every line, and a style never nests inside itself (``StyledLineBuilder`` sees to both).
enum InlineToken: Equatable {
    /// Visible text, white space already collapsed.
    case text(String)
    /// A style starts here.
    case open(SpanStyle)
    /// The innermost open style ends here.
    case close(SpanStyle)
}

/// Writes a line's tokens as XEP-0393 text, emitting a span's directives only where a receiving parser will read
/// them back as that span (XEP-0393 "Business Rules › Spans"); otherwise the span's text is kept without them. Pure.
///
/// A span gets its directives when all of these hold:
/// - its text, without leading and trailing white space (moved outside the directives), is not empty;
/// - the opening directive would sit at the start of the line, after white space, or right after the enclosing
///   span's opening directive (which is always a different character);
/// - its text does not contain the directive character itself (there is no escape: a `*` inside `*…*` would end
///   the span early under lazy matching).
/// So `a<b>b</b>c` becomes `abc`, `<b>ab</b>c` becomes `*ab*c` (a closing directive may be followed by anything:
/// the XEP's own example is "*strong*plain*"), and `<b> x </b>` becomes ` *x* `.
enum InlineRenderer {
    /// A line's tokens as a tree.
    indirect enum Node {
        case text(String)
        case span(SpanStyle, [Node])
    }

    /// Renders one line. Span nesting is at most four deep (one per style), so the recursion is bounded.
    static func render(_ tokens: [InlineToken]) -> String {
        render(nodes(tokens), afterBoundary: true)
    }

    /// Tokens to a tree, with an explicit stack. Adjacent spans of one style become one (`<del>a</del><del>b</del>`
    /// is `~ab~`, not `~a~b`).
    static func nodes(_ tokens: [InlineToken]) -> [Node] {
        var stack: [(style: SpanStyle?, children: [Node])] = [(nil, [])]
        func closeInnermost() {
            guard stack.count > 1, let finished = stack.popLast(), let style = finished.style else { return }
            let parent = stack.count - 1
            if case .span(style, let previous) = stack[parent].children.last {
                stack[parent].children[stack[parent].children.count - 1] = .span(style, previous + finished.children)
            } else {
                stack[parent].children.append(.span(style, finished.children))
            }
        }
        for token in tokens {
            switch token {
            case .text(let text):
                stack[stack.count - 1].children.append(.text(text))
            case .open(let style):
                stack.append((style, []))
            case .close:
                closeInnermost()
            }
        }
        while stack.count > 1 { closeInnermost() }
        return stack[0].children
    }

    /// `afterBoundary`: whether what precedes the first node lets a span open (line start, white space, or an
    /// opening directive).
    private static func render(_ nodes: [Node], afterBoundary: Bool) -> String {
        var output = ""
        for node in nodes {
            switch node {
            case .text(let text):
                output += text
            case .span(let style, let children):
                let boundary = output.unicodeScalars.last.map(\.isStylingWhitespace) ?? afterBoundary
                output += render(style, children, afterBoundary: boundary)
            }
        }
        return output
    }

    private static func render(_ style: SpanStyle, _ children: [Node], afterBoundary: Bool) -> String {
        let rendered = render(children, afterBoundary: true)
        // Common case first: nothing to move out of the span.
        if afterBoundary, let first = rendered.unicodeScalars.first, !first.isStylingWhitespace,
           let last = rendered.unicodeScalars.last, !last.isStylingWhitespace,
           !rendered.unicodeScalars.contains(style.directive) {
            let directive = String(style.rawValue)
            return directive + rendered + directive
        }
        let inner = rendered.unicodeScalars
        let start = inner.firstIndex { !$0.isStylingWhitespace } ?? inner.endIndex
        let end = inner[start...].lastIndex { !$0.isStylingWhitespace }.map(inner.index(after:)) ?? start
        let leading = inner[..<start]
        let core = inner[start..<end]
        if !core.isEmpty, afterBoundary || !leading.isEmpty, !core.contains(style.directive) {
            let directive = String(style.rawValue)
            return String(leading) + directive + String(core) + directive + String(inner[end...])
        }
        return render(children, afterBoundary: afterBoundary)
    }
}
