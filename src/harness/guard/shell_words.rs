//! A command text taken apart as a POSIX shell (bash, zsh, dash) takes it apart before it runs
//! anything: lists (`;`, `&&`, `||`, `|`, `&`, newlines), subshells `( )` and groups `{ }`,
//! simple commands with their assignments, words and redirections, quote removal (single,
//! double, ANSI-C `$'..'`), backslash escapes, here-documents, and the commands inside `$( )`,
//! backticks and `<( )` / `>( )`.
//!
//! Invariants: it never runs or expands anything but command substitutions' words (an unquoted
//! substitution stands for the words of the commands inside it, split as a shell splits
//! fields); parameters (`$NAME`, `${..}`) and arithmetic stay as written; a text it cannot take
//! apart (an unterminated quote or substitution, an unbalanced parenthesis) is an error, never a
//! guess; nesting deeper than [`MAX_NESTING`] is an error too.

/// How deep substitutions, subshells and groups may nest before the text is refused.
pub const MAX_NESTING: usize = 48;

/// One command of a list: a simple command, or a list run in a subshell or a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellCommand {
    Simple(SimpleCommand),
    /// `( .. )` (a subshell: a `cd` inside stays inside) or `{ ..; }` (the same shell).
    Group {
        subshell: bool,
        commands: Vec<ShellCommand>,
    },
}

/// A simple command after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    /// The `NAME=value` words before the first word.
    pub assignments: Vec<String>,
    /// The words, the program first.
    pub words: Vec<Word>,
    pub redirections: Vec<Redirection>,
    /// The commands run to make its words and redirections (`$( )`, backticks, `<( )`), each a
    /// subshell.
    pub substitutions: Vec<ShellCommand>,
    /// What it reads on stdin from here-documents (`<<END`) and here-strings (`<<<word`).
    pub here_documents: Vec<String>,
}

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Whether an unquoted `*`, `?`, `[` or a brace expansion (`{a,b}`) stands in it, so the
    /// shell expands it against the file system.
    pub glob: bool,
}

/// A redirection and the word it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirection {
    /// `>`, `>>`, `>|`, `&>`, `&>>`, `<>` and `>&word` write their target; `<` reads it.
    pub writes: bool,
    pub target: Word,
}

/// Why a command text cannot be taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellSyntaxError(pub String);

/// The commands of `text`, in order.
pub fn parse_command_text(text: &str) -> Result<Vec<ShellCommand>, ShellSyntaxError> {
    parse_command_text_nested(text, 0)
}

fn parse_command_text_nested(
    text: &str,
    nesting: usize,
) -> Result<Vec<ShellCommand>, ShellSyntaxError> {
    let mut parser = Parser {
        chars: text.chars().collect(),
        at: 0,
        nesting,
        substitutions: Vec::new(),
        here_document_bodies: Vec::new(),
    };
    parser.list(None)
}

/// Where a here-document's body lies: it starts after the newline at `line_end` and the list
/// goes on at `resume`.
struct HereDocumentBody {
    line_end: usize,
    resume: usize,
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    nesting: usize,
    /// The substitutions met since the current simple command began.
    substitutions: Vec<ShellCommand>,
    here_document_bodies: Vec<HereDocumentBody>,
}

/// Characters that end an unquoted word.
fn ends_word(c: char) -> bool {
    c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>')
}

/// Words a shell reads as syntax at a command's start; the command after them is what runs.
const RESERVED_WORDS: [&str; 14] = [
    "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "esac",
    "function",
];

fn error<T>(what: &str) -> Result<T, ShellSyntaxError> {
    Err(ShellSyntaxError(what.to_owned()))
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.at + offset).copied()
    }

    fn enter(&mut self) -> Result<(), ShellSyntaxError> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return error("commands nested too deeply");
        }
        Ok(())
    }

    /// Skips blanks and line continuations (never a newline).
    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.at += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.at += 2,
                _ => return,
            }
        }
    }

    fn skip_comment(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.at += 1;
        }
    }

    /// Consumes a newline and the here-document bodies that follow it.
    fn newline(&mut self) {
        let line_end = self.at;
        self.at += 1;
        if let Some(body) = self
            .here_document_bodies
            .iter()
            .rev()
            .find(|body| body.line_end == line_end)
        {
            self.at = body.resume;
        }
    }

    /// A list up to `closing` (`)` or `}`) or the end of the text.
    fn list(&mut self, closing: Option<char>) -> Result<Vec<ShellCommand>, ShellSyntaxError> {
        let mut commands = Vec::new();
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                return match closing {
                    Some(')') => error("an unterminated `(` or `$(`"),
                    Some(_) => error("an unterminated `{`"),
                    None => Ok(commands),
                };
            };
            match c {
                '#' => self.skip_comment(),
                '\n' => self.newline(),
                ';' | '|' => self.at += 1,
                '&' if self.peek_at(1) != Some('>') => self.at += 1,
                ')' => {
                    if closing == Some(')') {
                        self.at += 1;
                        return Ok(commands);
                    }
                    return error("an unbalanced `)`");
                }
                '}' if closing == Some('}') && self.at_reserved_brace() => {
                    self.at += 1;
                    return Ok(commands);
                }
                '(' if self.peek_at(1) == Some('(') => {
                    self.at += 2;
                    self.skip_balanced_parentheses(2)?;
                }
                '(' => {
                    self.at += 1;
                    commands.push(self.group(')')?);
                }
                '{' if self.at_reserved_brace() => {
                    self.at += 1;
                    commands.push(self.group('}')?);
                }
                _ => {
                    let simple = self.simple_command(closing)?;
                    if simple != SimpleCommand::default() {
                        commands.push(ShellCommand::Simple(simple));
                    }
                }
            }
        }
    }

    /// Whether the `{` or `}` here stands alone as a word.
    fn at_reserved_brace(&self) -> bool {
        self.peek_at(1)
            .is_none_or(|next| next.is_whitespace() || matches!(next, ';' | '&' | '|' | ')'))
    }

    /// Skips to the `depth` closing parentheses that balance those just read.
    fn skip_balanced_parentheses(&mut self, mut depth: usize) -> Result<String, ShellSyntaxError> {
        let start = self.at;
        while depth > 0 {
            match self.peek() {
                None => return error("an unterminated `((`"),
                Some('(') => depth += 1,
                Some(')') => depth -= 1,
                Some(_) => {}
            }
            self.at += 1;
        }
        Ok(self.chars[start..self.at].iter().collect())
    }

    fn simple_command(&mut self, closing: Option<char>) -> Result<SimpleCommand, ShellSyntaxError> {
        let outer_substitutions = std::mem::take(&mut self.substitutions);
        let mut command = SimpleCommand::default();
        let result = self.simple_command_words(closing, &mut command);
        command.substitutions = std::mem::replace(&mut self.substitutions, outer_substitutions);
        result.map(|()| command)
    }

    fn simple_command_words(
        &mut self,
        closing: Option<char>,
        command: &mut SimpleCommand,
    ) -> Result<(), ShellSyntaxError> {
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                return Ok(());
            };
            if matches!(c, '\n' | ';' | '|' | ')') || (c == '&' && self.peek_at(1) != Some('>')) {
                return Ok(());
            }
            if c == '}'
                && closing == Some('}')
                && self.at_reserved_brace()
                && command_is_empty(command)
            {
                return Ok(());
            }
            if c == '#' {
                self.skip_comment();
                return Ok(());
            }
            if c == '(' {
                if self.peek_at(1) == Some(')') {
                    // A function's definition, `name() { .. }`: its body follows as a group.
                    self.at += 2;
                    return Ok(());
                }
                return error("a `(` inside a command");
            }
            if (c == '<' || c == '>') && self.peek_at(1) == Some('(') {
                self.at += 2;
                let inner = self.group(')')?;
                self.substitutions.push(inner);
                command.words.push(Word {
                    text: "/dev/fd/63".to_owned(),
                    glob: false,
                });
                continue;
            }
            if let Some(redirection) = self.redirection_operator() {
                self.redirection(redirection, command)?;
                continue;
            }
            let fields = self.word()?;
            for field in fields {
                let at_start = command.words.is_empty();
                if at_start && is_assignment(&field.text) {
                    command.assignments.push(field.text);
                } else if !(at_start && RESERVED_WORDS.contains(&field.text.as_str())) {
                    command.words.push(field);
                }
            }
        }
    }

    /// The list of a `(`, `$(`, `<(` or `>(` (a subshell) or a `{` just opened, up to `closing`.
    fn group(&mut self, closing: char) -> Result<ShellCommand, ShellSyntaxError> {
        self.enter()?;
        let commands = self.list(Some(closing))?;
        self.nesting -= 1;
        Ok(ShellCommand::Group {
            subshell: closing == ')',
            commands,
        })
    }

    /// The redirection operator here, consumed, if one stands here.
    fn redirection_operator(&mut self) -> Option<RedirectionOperator> {
        let mut offset = 0;
        while self.peek_at(offset).is_some_and(|c| c.is_ascii_digit()) {
            offset += 1;
        }
        let operators: [(&str, RedirectionOperator); 12] = [
            ("&>>", RedirectionOperator::Writes),
            ("&>", RedirectionOperator::Writes),
            ("<<<", RedirectionOperator::HereString),
            ("<<-", RedirectionOperator::TabStrippedHereDocument),
            ("<<", RedirectionOperator::HereDocument),
            ("<>", RedirectionOperator::Writes),
            ("<&", RedirectionOperator::Duplicates),
            (">&", RedirectionOperator::WritesOrDuplicates),
            (">>", RedirectionOperator::Writes),
            (">|", RedirectionOperator::Writes),
            (">", RedirectionOperator::Writes),
            ("<", RedirectionOperator::Reads),
        ];
        for (text, operator) in operators {
            if (offset == 0 || !text.starts_with('&'))
                && text
                    .chars()
                    .enumerate()
                    .all(|(index, c)| self.peek_at(offset + index) == Some(c))
            {
                self.at += offset + text.chars().count();
                return Some(operator);
            }
        }
        None
    }

    fn redirection(
        &mut self,
        operator: RedirectionOperator,
        command: &mut SimpleCommand,
    ) -> Result<(), ShellSyntaxError> {
        self.skip_blanks();
        let target = self.single_word()?;
        match operator {
            RedirectionOperator::Duplicates => {}
            // `>&2`, `>&-`: a descriptor duplicated or closed, no file written.
            RedirectionOperator::WritesOrDuplicates
                if target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()) => {}
            RedirectionOperator::Writes
            | RedirectionOperator::Reads
            | RedirectionOperator::WritesOrDuplicates => command.redirections.push(Redirection {
                writes: !matches!(operator, RedirectionOperator::Reads),
                target,
            }),
            RedirectionOperator::HereString => command.here_documents.push(target.text),
            RedirectionOperator::HereDocument | RedirectionOperator::TabStrippedHereDocument => {
                let strip_tabs = matches!(operator, RedirectionOperator::TabStrippedHereDocument);
                let body = self.here_document(&target.text, strip_tabs)?;
                command.here_documents.push(body);
            }
        }
        Ok(())
    }

    /// The body of a here-document ended by `delimiter`, which starts after the end of the
    /// current line (or after the bodies already read from that line).
    fn here_document(
        &mut self,
        delimiter: &str,
        strip_tabs: bool,
    ) -> Result<String, ShellSyntaxError> {
        let Some(line_end) = (self.at..self.chars.len()).find(|index| self.chars[*index] == '\n')
        else {
            return error("a here-document with no body");
        };
        let mut start = self
            .here_document_bodies
            .iter()
            .rev()
            .find(|body| body.line_end == line_end)
            .map_or(line_end + 1, |body| body.resume);
        let mut body = String::new();
        let resume = loop {
            if start >= self.chars.len() {
                break self.chars.len();
            }
            let end = (start..self.chars.len())
                .find(|index| self.chars[*index] == '\n')
                .unwrap_or(self.chars.len());
            let line: String = self.chars[start..end].iter().collect();
            let compared = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line.as_str()
            };
            if compared == delimiter {
                break (end + 1).min(self.chars.len());
            }
            body.push_str(&line);
            body.push('\n');
            start = end + 1;
        };
        self.here_document_bodies
            .push(HereDocumentBody { line_end, resume });
        Ok(body)
    }

    /// One word that must stand here, its fields joined (a redirection's target).
    fn single_word(&mut self) -> Result<Word, ShellSyntaxError> {
        let fields = self.word()?;
        if fields.is_empty() {
            return error("a redirection with no word after it");
        }
        let glob = fields.iter().any(|field| field.glob);
        let text = fields
            .into_iter()
            .map(|field| field.text)
            .collect::<Vec<_>>()
            .join(" ");
        Ok(Word { text, glob })
    }

    /// The fields of the word here: one, none (an unquoted substitution that made nothing) or
    /// more (an unquoted substitution's words).
    fn word(&mut self) -> Result<Vec<Word>, ShellSyntaxError> {
        let mut word = WordBuilder::default();
        while let Some(c) = self.peek() {
            if ends_word(c) {
                break;
            }
            match c {
                '\\' => {
                    match self.peek_at(1) {
                        Some('\n') => {}
                        Some(escaped) => word.push(escaped),
                        None => word.push('\\'),
                    }
                    self.at = (self.at + 2).min(self.chars.len());
                }
                '\'' => {
                    self.at += 1;
                    word.started = true;
                    loop {
                        match self.peek() {
                            None => return error("an unterminated single quote"),
                            Some('\'') => break,
                            Some(quoted) => word.push(quoted),
                        }
                        self.at += 1;
                    }
                    self.at += 1;
                }
                '"' => {
                    self.at += 1;
                    self.double_quoted(&mut word)?;
                }
                '$' if self.peek_at(1) == Some('\'') => {
                    self.at += 2;
                    self.ansi_c_quoted(&mut word)?;
                }
                '$' if self.peek_at(1) == Some('"') => {
                    self.at += 2;
                    self.double_quoted(&mut word)?;
                }
                '$' | '`' => self.expansion(&mut word, false)?,
                _ => {
                    word.glob |= matches!(c, '*' | '?' | '[');
                    word.brace |= c == '{';
                    word.push(c);
                    self.at += 1;
                }
            }
        }
        Ok(word.finish())
    }

    /// The `$` or backtick expansion here, joined to `word` (split into fields unless `quoted`).
    fn expansion(&mut self, word: &mut WordBuilder, quoted: bool) -> Result<(), ShellSyntaxError> {
        let expansion = if self.peek() == Some('`') {
            self.at += 1;
            Expansion::Words(self.backticks()?)
        } else {
            self.dollar()?
        };
        match expansion {
            Expansion::Words(text) => word.push_expansion(&text, quoted),
            Expansion::AsWritten(text) => word.push_str(&text),
        }
        Ok(())
    }

    /// The rest of a double-quoted string (its opening quote read).
    fn double_quoted(&mut self, word: &mut WordBuilder) -> Result<(), ShellSyntaxError> {
        word.started = true;
        loop {
            let Some(c) = self.peek() else {
                return error("an unterminated double quote");
            };
            match c {
                '"' => {
                    self.at += 1;
                    return Ok(());
                }
                '\\' => {
                    match self.peek_at(1) {
                        Some('\n') => {}
                        Some(escaped @ ('$' | '`' | '"' | '\\')) => word.push(escaped),
                        Some(other) => {
                            word.push('\\');
                            word.push(other);
                        }
                        None => return error("an unterminated double quote"),
                    }
                    self.at += 2;
                }
                '$' | '`' => self.expansion(word, true)?,
                _ => {
                    word.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// The rest of an ANSI-C string, `$'..'` (its opening read).
    fn ansi_c_quoted(&mut self, word: &mut WordBuilder) -> Result<(), ShellSyntaxError> {
        word.started = true;
        loop {
            let Some(c) = self.peek() else {
                return error("an unterminated `$'`");
            };
            self.at += 1;
            match c {
                '\'' => return Ok(()),
                '\\' => {
                    let Some(escape) = self.peek() else {
                        return error("an unterminated `$'`");
                    };
                    self.at += 1;
                    let decoded = match escape {
                        'a' => Some('\u{7}'),
                        'b' => Some('\u{8}'),
                        'e' | 'E' => Some('\u{1b}'),
                        'f' => Some('\u{c}'),
                        'n' => Some('\n'),
                        'r' => Some('\r'),
                        't' => Some('\t'),
                        'v' => Some('\u{b}'),
                        'x' => self.ansi_c_number(16, 2),
                        'u' => self.ansi_c_number(16, 4),
                        'U' => self.ansi_c_number(16, 8),
                        'c' => {
                            let control = self
                                .peek()
                                .and_then(|c| char::from_u32(u32::from(c) & 0x1f));
                            self.at += 1;
                            control
                        }
                        '0'..='7' => {
                            self.at -= 1;
                            self.ansi_c_number(8, 3)
                        }
                        other => Some(other),
                    };
                    if let Some(decoded) = decoded {
                        word.push(decoded);
                    }
                }
                other => word.push(other),
            }
        }
    }

    /// Up to `digits` digits in `radix`, as a character.
    fn ansi_c_number(&mut self, radix: u32, digits: usize) -> Option<char> {
        let mut value = 0_u32;
        let mut read = 0;
        while read < digits
            && let Some(digit) = self.peek().and_then(|c| c.to_digit(radix))
        {
            value = value * radix + digit;
            read += 1;
            self.at += 1;
        }
        (read > 0).then(|| char::from_u32(value)).flatten()
    }

    /// What a `$` here stands for: a command substitution's words, or a parameter or
    /// arithmetic as written.
    fn dollar(&mut self) -> Result<Expansion, ShellSyntaxError> {
        match (self.peek_at(1), self.peek_at(2)) {
            (Some('('), Some('(')) => {
                self.at += 3;
                let inner = self.skip_balanced_parentheses(2)?;
                Ok(Expansion::AsWritten(format!("$(({inner}")))
            }
            (Some('('), _) => {
                self.at += 2;
                let inner = self.group(')')?;
                let text = words_of(&inner).join(" ");
                self.substitutions.push(inner);
                Ok(Expansion::Words(text))
            }
            (Some('{'), _) => {
                let start = self.at;
                self.at += 2;
                let mut depth = 1;
                while depth > 0 {
                    match self.peek() {
                        None => return error("an unterminated `${`"),
                        Some('{') => depth += 1,
                        Some('}') => depth -= 1,
                        Some('\\') => self.at += 1,
                        Some(_) => {}
                    }
                    self.at += 1;
                }
                Ok(Expansion::AsWritten(
                    self.chars[start..self.at].iter().collect(),
                ))
            }
            _ => {
                let start = self.at;
                self.at += 1;
                if self
                    .peek()
                    .is_some_and(|c| c.is_ascii_digit() || "@*#?$!-".contains(c))
                {
                    self.at += 1;
                } else {
                    while self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        self.at += 1;
                    }
                }
                Ok(Expansion::AsWritten(
                    self.chars[start..self.at].iter().collect(),
                ))
            }
        }
    }

    /// A backtick substitution's words (its opening backtick read); its commands are taken
    /// apart as a text of their own, after the backslashes the shell removes.
    fn backticks(&mut self) -> Result<String, ShellSyntaxError> {
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return error("an unterminated backtick"),
                Some('`') => {
                    self.at += 1;
                    break;
                }
                Some('\\') if matches!(self.peek_at(1), Some('`' | '\\' | '$')) => {
                    inner.push(self.peek_at(1).unwrap_or('\\'));
                    self.at += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.at += 1;
                }
            }
        }
        if self.nesting + 1 > MAX_NESTING {
            return error("commands nested too deeply");
        }
        let commands = parse_command_text_nested(&inner, self.nesting + 1)?;
        let substitution = ShellCommand::Group {
            subshell: true,
            commands,
        };
        let text = words_of(&substitution).join(" ");
        self.substitutions.push(substitution);
        Ok(text)
    }
}

fn command_is_empty(command: &SimpleCommand) -> bool {
    command.words.is_empty() && command.assignments.is_empty() && command.redirections.is_empty()
}

/// What a `$` stands for.
enum Expansion {
    /// A command substitution: the words of its commands.
    Words(String),
    /// A parameter or an arithmetic expansion, kept as written (its value is not known).
    AsWritten(String),
}

#[derive(Debug, Clone, Copy)]
enum RedirectionOperator {
    Writes,
    Reads,
    Duplicates,
    WritesOrDuplicates,
    HereString,
    HereDocument,
    /// `<<-`: the body's leading tabs are stripped.
    TabStrippedHereDocument,
}

/// Whether `text` is an assignment, `NAME=value`.
fn is_assignment(text: &str) -> bool {
    text.split_once('=').is_some_and(|(name, _)| {
        let name = name.strip_suffix('+').unwrap_or(name);
        name.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// What `command` prints, as far as the guard can tell: the words after `echo` and `printf`
/// (a substitution of anything else stands for nothing it can read).
fn words_of(command: &ShellCommand) -> Vec<String> {
    match command {
        ShellCommand::Simple(simple) => match simple.words.split_first() {
            Some((program, arguments))
                if matches!(program.text.rsplit('/').next(), Some("echo" | "printf")) =>
            {
                arguments.iter().map(|word| word.text.clone()).collect()
            }
            _ => Vec::new(),
        },
        ShellCommand::Group { commands, .. } => commands.iter().flat_map(words_of).collect(),
    }
}

/// A word being read: the fields finished so far and the current one.
#[derive(Default)]
struct WordBuilder {
    fields: Vec<Word>,
    text: String,
    glob: bool,
    brace: bool,
    /// Whether the current field exists even if empty (a quote was read).
    started: bool,
}

impl WordBuilder {
    /// A character of the field, quoted or not.
    fn push(&mut self, c: char) {
        self.started = true;
        self.text.push(c);
    }

    /// Text that joins the field as it is (a parameter as written, a quoted substitution).
    fn push_str(&mut self, text: &str) {
        self.started = true;
        self.text.push_str(text);
    }

    /// A substitution's text: inside double quotes it joins the field; unquoted it is split
    /// into fields at whitespace.
    fn push_expansion(&mut self, text: &str, quoted: bool) {
        if quoted {
            self.push_str(text);
            return;
        }
        let mut pieces = text.split(char::is_whitespace).peekable();
        while let Some(piece) = pieces.next() {
            if !piece.is_empty() {
                self.started = true;
                self.text.push_str(piece);
            }
            if pieces.peek().is_some() {
                self.end_field();
            }
        }
    }

    fn end_field(&mut self) {
        if self.started || !self.text.is_empty() {
            let glob =
                self.glob || (self.brace && (self.text.contains(',') || self.text.contains("..")));
            self.fields.push(Word {
                text: std::mem::take(&mut self.text),
                glob,
            });
        }
        self.started = false;
        self.glob = false;
        self.brace = false;
    }

    fn finish(mut self) -> Vec<Word> {
        self.end_field();
        self.fields
    }
}

#[cfg(test)]
impl SimpleCommand {
    /// The words' texts.
    pub fn texts(&self) -> Vec<&str> {
        self.words.iter().map(|word| word.text.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of each simple command of `text`, substitutions' commands first.
    fn commands(text: &str) -> Vec<Vec<String>> {
        fn flatten(command: &ShellCommand, into: &mut Vec<Vec<String>>) {
            match command {
                ShellCommand::Simple(simple) => {
                    for substitution in &simple.substitutions {
                        flatten(substitution, into);
                    }
                    into.push(simple.texts().into_iter().map(str::to_owned).collect());
                }
                ShellCommand::Group { commands, .. } => {
                    for command in commands {
                        flatten(command, into);
                    }
                }
            }
        }
        let mut into = Vec::new();
        for command in parse_command_text(text).unwrap() {
            flatten(&command, &mut into);
        }
        into
    }

    fn simple(text: &str) -> SimpleCommand {
        match parse_command_text(text).unwrap().remove(0) {
            ShellCommand::Simple(simple) => simple,
            other @ ShellCommand::Group { .. } => panic!("not a simple command: {other:?}"),
        }
    }

    #[test]
    fn quotes_and_escapes_are_removed_as_a_shell_removes_them() {
        assert_eq!(
            commands(r#"aidlc engine hook "record-human"-turn 'a b' c\ d $'e\x41\n' "f\"g\\" h\'"#),
            [vec![
                "aidlc",
                "engine",
                "hook",
                "record-human-turn",
                "a b",
                "c d",
                "eA\n",
                "f\"g\\",
                "h'"
            ]]
        );
        assert_eq!(commands(r#"a "" '' b"#), [vec!["a", "", "", "b"]]);
        assert_eq!(commands("a\\\nb c"), [vec!["ab", "c"]]);
        assert_eq!(commands(r"x $'\101\u0042\cA'"), [vec!["x", "AB\u{1}"]]);
        assert_eq!(commands(r#"x "a\nb""#), [vec!["x", "a\\nb"]]);
    }

    #[test]
    fn lists_pipelines_groups_and_subshells_are_split_into_simple_commands() {
        assert_eq!(
            commands("a 1; b 2 && c || d | e & f\ng |& h"),
            [
                vec!["a", "1"],
                vec!["b", "2"],
                vec!["c"],
                vec!["d"],
                vec!["e"],
                vec!["f"],
                vec!["g"],
                vec!["h"]
            ]
        );
        assert_eq!(
            commands("(cd x && rm y); { z; }; if true; then w; fi"),
            [
                vec!["cd", "x"],
                vec!["rm", "y"],
                vec!["z"],
                vec!["true"],
                vec!["w"]
            ]
        );
        let parsed = parse_command_text("(cd x)").unwrap();
        assert!(matches!(
            parsed[0],
            ShellCommand::Group { subshell: true, .. }
        ));
        assert_eq!(commands("# a comment\na # another"), [vec!["a"]]);
    }

    #[test]
    fn substitutions_are_commands_and_their_words_stand_in_the_outer_word() {
        assert_eq!(
            commands("aidlc engine hook $(echo record-human-turn)"),
            [
                vec!["echo", "record-human-turn"],
                vec!["aidlc", "engine", "hook", "record-human-turn"]
            ]
        );
        assert_eq!(
            commands("x \"$(echo a  b)\" `printf c d` <(e) $(f g)"),
            [
                vec!["echo", "a", "b"],
                vec!["printf", "c", "d"],
                vec!["e"],
                vec!["f", "g"],
                vec!["x", "a b", "c", "d", "/dev/fd/63"]
            ]
        );
        assert_eq!(
            commands("x $(echo $(echo c))"),
            [vec!["echo", "c"], vec!["echo", "c"], vec!["x", "c"]]
        );
        assert_eq!(
            commands("x $HOME ${A:-b} $((1 + 2))"),
            [vec!["x", "$HOME", "${A:-b}", "$((1 + 2))"]]
        );
    }

    #[test]
    fn assignments_redirections_and_here_documents_are_set_apart() {
        let command = simple("A=1 B='x y' cmd arg >out 2>>err <in &>both 2>&1 >&file");
        assert_eq!(command.assignments, ["A=1", "B=x y"]);
        assert_eq!(command.texts(), ["cmd", "arg"]);
        let targets: Vec<(bool, &str)> = command
            .redirections
            .iter()
            .map(|redirection| (redirection.writes, redirection.target.text.as_str()))
            .collect();
        assert_eq!(
            targets,
            [
                (true, "out"),
                (true, "err"),
                (false, "in"),
                (true, "both"),
                (true, "file")
            ]
        );
        let parsed = parse_command_text("cat > f <<'EOF'\nit's \"x\n$(y)\nEOF\nnext 1").unwrap();
        let ShellCommand::Simple(first) = &parsed[0] else {
            panic!("{parsed:?}")
        };
        assert_eq!(first.here_documents, ["it's \"x\n$(y)\n"]);
        assert_eq!(parsed.len(), 2, "{parsed:?}");
        assert_eq!(simple("bash <<< 'a b'").here_documents, ["a b"]);
    }

    #[test]
    fn globs_are_marked_only_when_unquoted() {
        let command = simple(r#"rm a* "b*" c\? [d] {e,f} {} x"#);
        let globs: Vec<bool> = command.words.iter().map(|word| word.glob).collect();
        assert_eq!(globs, [false, true, false, false, true, true, false, false]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 2_000,
            rng_seed: proptest::test_runner::RngSeed::Fixed(40),
            ..proptest::test_runner::Config::default()
        })]

        /// Any text is taken apart or refused, never a panic (a guard that panics lets the
        /// call through on some harnesses).
        #[test]
        fn any_text_is_taken_apart_or_refused_without_a_panic(
            text in "[a-z $'\"\\\\`(){}<>|&;#\n*?\\[\\]=~0-9-]{0,64}"
        ) {
            let _ = parse_command_text(&text);
        }
    }

    #[test]
    fn a_text_that_cannot_be_taken_apart_is_an_error() {
        for text in [
            "echo 'a", "echo \"a", "echo $(a", "echo `a", "echo ${a", "(a", "a)", "{ a;",
            "echo $'a", "a (b)",
        ] {
            assert!(parse_command_text(text).is_err(), "{text}");
        }
        let deep = format!(
            "{}x{}",
            "$(".repeat(MAX_NESTING + 2),
            ")".repeat(MAX_NESTING + 2)
        );
        assert!(parse_command_text(&deep).is_err());
    }
}
