//! A small HCL parser for jobspecs: blocks with labels, attributes, strings
//! (with escapes; `${…}` kept as text), numbers, bools, null, lists, objects,
//! heredocs (`<<EOF`, `<<-EOF`) and comments (`#`, `//`, `/* */`). No
//! expressions, functions or variables: an unsupported construct is an error
//! with its line and column.
//!
//! Bounded: nesting deeper than [`MAX_DEPTH`] is an error, so arbitrary input
//! cannot overflow the stack.

/// Deepest nesting of blocks, lists and objects.
pub const MAX_DEPTH: usize = 64;

/// A position in the text (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// Line.
    pub line: usize,
    /// Column (in characters).
    pub column: usize,
}

/// An HCL value.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A string (or heredoc).
    Str(String),
    /// A number.
    Num(f64),
    /// A bool.
    Bool(bool),
    /// `null`.
    Null,
    /// A list.
    List(Vec<Expr>),
    /// An object `{ key = value }`.
    Object(Vec<(String, Expr)>),
}

/// `name = value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// Name.
    pub name: String,
    /// Value.
    pub value: Expr,
    /// Where it starts.
    pub pos: Pos,
}

/// `type "label" { body }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Block type.
    pub kind: String,
    /// Labels.
    pub labels: Vec<String>,
    /// Body.
    pub body: Body,
    /// Where it starts.
    pub pos: Pos,
}

/// A body: attributes and blocks, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Body {
    /// Attributes.
    pub attributes: Vec<Attribute>,
    /// Blocks.
    pub blocks: Vec<Block>,
}

impl Body {
    /// The attribute named `name`.
    pub fn attr(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }
}

/// A syntax error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {}, column {}: {message}", pos.line, pos.column)]
pub struct HclError {
    /// Where.
    pub pos: Pos,
    /// What.
    pub message: String,
}

struct Parser<'a> {
    chars: Vec<char>,
    i: usize,
    line: usize,
    col: usize,
    _text: &'a str,
}

/// Parses a whole file into its top-level body.
pub fn parse(text: &str) -> Result<Body, HclError> {
    let mut p = Parser {
        chars: text.chars().collect(),
        i: 0,
        line: 1,
        col: 1,
        _text: text,
    };
    let body = p.body(0, false)?;
    Ok(body)
}

impl Parser<'_> {
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.col,
        }
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, HclError> {
        Err(HclError {
            pos: self.pos(),
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.i + n).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    /// Skips spaces and comments; with `newlines`, newlines too. Returns
    /// whether a newline was skipped.
    fn skip(&mut self, newlines: bool) -> Result<bool, HclError> {
        let mut saw_newline = false;
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => {
                    self.bump();
                }
                Some('\n') if newlines => {
                    saw_newline = true;
                    self.bump();
                }
                Some('#') => self.line_comment(),
                Some('/') if self.peek_at(1) == Some('/') => self.line_comment(),
                Some('/') if self.peek_at(1) == Some('*') => {
                    let start = self.pos();
                    self.bump();
                    self.bump();
                    loop {
                        match self.bump() {
                            None => {
                                return Err(HclError {
                                    pos: start,
                                    message: "unterminated /* comment".into(),
                                });
                            }
                            Some('*') if self.peek() == Some('/') => {
                                self.bump();
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                }
                _ => return Ok(saw_newline),
            }
        }
    }

    fn line_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.bump();
        }
    }

    fn ident(&mut self) -> Option<String> {
        let c = self.peek()?;
        if !(c.is_alphabetic() || c == '_') {
            return None;
        }
        let mut s = String::new();
        while let Some(c) = self.peek() {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                s.push(c);
                self.bump();
            } else {
                break;
            }
        }
        Some(s)
    }

    fn body(&mut self, depth: usize, nested: bool) -> Result<Body, HclError> {
        if depth > MAX_DEPTH {
            return self.err("nested too deeply");
        }
        let mut body = Body::default();
        loop {
            self.skip(true)?;
            match self.peek() {
                None if nested => return self.err("missing } at the end of the block"),
                None => return Ok(body),
                Some('}') if nested => {
                    self.bump();
                    return Ok(body);
                }
                _ => {}
            }
            let pos = self.pos();
            let Some(name) = self.ident() else {
                let c = self.peek().unwrap_or(' ');
                return self.err(format!("expected an attribute or block name, found {c:?}"));
            };
            self.skip(false)?;
            match self.peek() {
                Some('=') | Some(':') => {
                    self.bump();
                    self.skip(false)?;
                    let value = self.expr(depth + 1)?;
                    body.attributes.push(Attribute { name, value, pos });
                    // An attribute ends at a newline, `}` or the end.
                    let newline = self.skip(false)?;
                    match self.peek() {
                        Some('\n') | None | Some('}') => {}
                        Some(',') | Some(';') => {
                            self.bump();
                        }
                        Some(c) if !newline => {
                            return self.err(format!(
                                "unexpected {c:?} after the value of {}",
                                body.attributes
                                    .last()
                                    .map(|a| a.name.as_str())
                                    .unwrap_or("")
                            ));
                        }
                        Some(_) => {}
                    }
                }
                _ => {
                    let mut labels = Vec::new();
                    loop {
                        self.skip(false)?;
                        match self.peek() {
                            Some('"') => labels.push(self.string()?),
                            Some('{') => {
                                self.bump();
                                break;
                            }
                            Some(c) if c.is_alphabetic() || c == '_' => {
                                labels.push(self.ident().unwrap_or_default());
                            }
                            Some(c) => {
                                return self
                                    .err(format!("expected = or {{ after {name}, found {c:?}"));
                            }
                            None => return self.err(format!("unexpected end after {name}")),
                        }
                    }
                    let inner = self.body(depth + 1, true)?;
                    body.blocks.push(Block {
                        kind: name,
                        labels,
                        body: inner,
                        pos,
                    });
                }
            }
        }
    }

    fn expr(&mut self, depth: usize) -> Result<Expr, HclError> {
        if depth > MAX_DEPTH {
            return self.err("nested too deeply");
        }
        match self.peek() {
            Some('"') => Ok(Expr::Str(self.string()?)),
            Some('<') if self.peek_at(1) == Some('<') => self.heredoc(),
            Some('[') => {
                self.bump();
                let mut items = Vec::new();
                loop {
                    self.skip(true)?;
                    if self.peek() == Some(']') {
                        self.bump();
                        return Ok(Expr::List(items));
                    }
                    items.push(self.expr(depth + 1)?);
                    self.skip(true)?;
                    match self.peek() {
                        Some(',') => {
                            self.bump();
                        }
                        Some(']') => {}
                        Some(c) => {
                            return self.err(format!("expected , or ] in a list, found {c:?}"));
                        }
                        None => return self.err("unterminated list"),
                    }
                }
            }
            Some('{') => {
                self.bump();
                let mut fields = Vec::new();
                loop {
                    self.skip(true)?;
                    match self.peek() {
                        Some('}') => {
                            self.bump();
                            return Ok(Expr::Object(fields));
                        }
                        Some(',') => {
                            self.bump();
                            continue;
                        }
                        Some('"') => {
                            let key = self.string()?;
                            self.object_value(key, &mut fields, depth)?;
                        }
                        Some(_) => match self.ident() {
                            Some(key) => self.object_value(key, &mut fields, depth)?,
                            None => {
                                let c = self.peek().unwrap_or(' ');
                                return self
                                    .err(format!("expected a key in an object, found {c:?}"));
                            }
                        },
                        None => return self.err("unterminated object"),
                    }
                }
            }
            Some(c) if c.is_ascii_digit() || c == '-' || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() => {
                let pos = self.pos();
                let word = self.ident().unwrap_or_default();
                match word.as_str() {
                    "true" => Ok(Expr::Bool(true)),
                    "false" => Ok(Expr::Bool(false)),
                    "null" => Ok(Expr::Null),
                    _ => Err(HclError {
                        pos,
                        message: format!(
                            "expressions such as {word}… are not supported: use a literal value"
                        ),
                    }),
                }
            }
            Some(c) => self.err(format!("expected a value, found {c:?}")),
            None => self.err("expected a value, found the end"),
        }
    }

    fn object_value(
        &mut self,
        key: String,
        fields: &mut Vec<(String, Expr)>,
        depth: usize,
    ) -> Result<(), HclError> {
        self.skip(false)?;
        match self.peek() {
            Some('=') | Some(':') => {
                self.bump();
            }
            _ => return self.err(format!("expected = after {key}")),
        }
        self.skip(false)?;
        let value = self.expr(depth + 1)?;
        fields.push((key, value));
        Ok(())
    }

    fn number(&mut self) -> Result<Expr, HclError> {
        let pos = self.pos();
        let mut s = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E') {
                s.push(c);
                self.bump();
            } else {
                break;
            }
        }
        match s.parse::<f64>() {
            Ok(n) if n.is_finite() => Ok(Expr::Num(n)),
            _ => Err(HclError {
                pos,
                message: format!("invalid number {s:?}"),
            }),
        }
    }

    fn string(&mut self) -> Result<String, HclError> {
        let start = self.pos();
        self.bump();
        let mut s = String::new();
        let mut interpolation = 0usize;
        loop {
            match self.bump() {
                None | Some('\n') => {
                    return Err(HclError {
                        pos: start,
                        message: "unterminated string".into(),
                    });
                }
                Some('"') if interpolation == 0 => return Ok(s),
                Some('\\') => {
                    let c = self.bump().ok_or(HclError {
                        pos: start,
                        message: "unterminated string".into(),
                    })?;
                    match c {
                        'n' => s.push('\n'),
                        't' => s.push('\t'),
                        'r' => s.push('\r'),
                        '"' => s.push('"'),
                        '\\' => s.push('\\'),
                        'u' => {
                            let mut hex = String::new();
                            for _ in 0..4 {
                                hex.extend(self.bump());
                            }
                            match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                                Some(ch) => s.push(ch),
                                None => return self.err(format!("invalid escape \\u{hex}")),
                            }
                        }
                        other => return self.err(format!("invalid escape \\{other}")),
                    }
                }
                Some('$') if self.peek() == Some('{') => {
                    interpolation += 1;
                    s.push('$');
                    s.push('{');
                    self.bump();
                }
                Some('}') if interpolation > 0 => {
                    interpolation -= 1;
                    s.push('}');
                }
                Some(c) => s.push(c),
            }
        }
    }

    fn heredoc(&mut self) -> Result<Expr, HclError> {
        let start = self.pos();
        self.bump();
        self.bump();
        let indent = if self.peek() == Some('-') {
            self.bump();
            true
        } else {
            false
        };
        let Some(marker) = self.ident() else {
            return self.err("expected a heredoc marker after <<");
        };
        // Rest of the opening line must be empty.
        self.skip(false)?;
        if self.bump() != Some('\n') {
            return self.err("a heredoc marker must end its line");
        }
        let mut lines = Vec::new();
        loop {
            if self.peek().is_none() {
                return Err(HclError {
                    pos: start,
                    message: format!("heredoc {marker} is not closed"),
                });
            }
            let mut line = String::new();
            while let Some(c) = self.peek() {
                self.bump();
                if c == '\n' {
                    break;
                }
                line.push(c);
            }
            if line.trim() == marker {
                break;
            }
            lines.push(line);
        }
        if indent {
            let strip = lines
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
                .min()
                .unwrap_or(0);
            for l in &mut lines {
                let cut = strip.min(l.len() - l.trim_start_matches([' ', '\t']).len());
                *l = l[cut..].to_string();
            }
        }
        let mut text = lines.join("\n");
        text.push('\n');
        Ok(Expr::Str(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_jobspec_shape() {
        let body = parse(
            r#"
# comment
job "web" {
  datacenters = ["dc1", "dc2"] // trailing
  type = "service"
  group "g" {
    count = 3
    meta = { a = "b", "c" = 1 }
    /* block
       comment */
    task "t" {
      config {
        args = ["-x", "${NOMAD_PORT}"]
        script = <<-EOT
          echo hi
            indented
          EOT
      }
    }
  }
}
"#,
        )
        .unwrap();
        let job = &body.blocks[0];
        assert_eq!(job.kind, "job");
        assert_eq!(job.labels, vec!["web"]);
        let group = &job.body.blocks[0];
        assert_eq!(group.body.attr("count").unwrap().value, Expr::Num(3.0));
        let config = &group.body.blocks[0].body.blocks[0].body;
        assert_eq!(
            config.attr("script").unwrap().value,
            Expr::Str("echo hi\n  indented\n".into())
        );
        assert_eq!(
            config.attr("args").unwrap().value,
            Expr::List(vec![
                Expr::Str("-x".into()),
                Expr::Str("${NOMAD_PORT}".into())
            ])
        );
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("job \"x\" {\n  count = var.n\n}").unwrap_err();
        assert_eq!(
            e.pos,
            Pos {
                line: 2,
                column: 11
            }
        );
        assert!(parse("job \"x\" {").is_err());
        assert!(parse("a = \"open").is_err());
        assert!(parse(&"[".repeat(500)).is_err());
        assert!(parse(&format!("a = {}", "[".repeat(500))).is_err());
    }
}
