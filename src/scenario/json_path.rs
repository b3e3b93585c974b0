//! The JSON path (`script[3].by`) of a position in a JSON text.
//!
//! [`crate::scenario::parse`] reports where a scenario is wrong as a JSON
//! path. serde_json gives the line and column where deserialization
//! stopped; this scanner walks the text up to there and says which member
//! or element it was in. (A path-tracking deserializer wrapper would
//! instantiate every scenario type a second time, which costs tens of KB in
//! the browser bundle; this walk runs only when there is an error.)
//!
//! The path follows serde's conventions for where errors are raised: a bad
//! value stops right after the value (its key is the last segment), an
//! unknown field right after its key, a missing field right after the
//! object (the object is the last segment).

enum Frame {
    /// In an object: the key of the member being read, once seen.
    Object(Option<String>),
    /// In an array: the index of the element being read.
    Array(usize),
}

/// The byte offset of 1-based `line` and `column` (serde_json's, which
/// count bytes) in `text`, clamped to its length.
fn offset(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match text[start..].find('\n') {
            Some(newline) => start += newline + 1,
            None => return text.len(),
        }
    }
    (start + column).min(text.len())
}

/// The path of the value being read at `line`, `column`: `.` for the
/// document itself, else `a.b[2].c`.
pub fn path_at(text: &str, line: usize, column: usize) -> String {
    path_at_offset(text, offset(text, line, column))
}

/// The path of the array element that ended just before `line`, `column`.
/// An error a `Deserialize` impl raises after reading its whole value (a
/// hand-read action) is placed after the enclosing array when the value was
/// its last element; this steps back inside the array.
pub fn path_of_element_before(text: &str, line: usize, column: usize) -> String {
    let bytes = text.as_bytes();
    let mut end = offset(text, line, column);
    while end > 0 && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    if end > 0 && bytes[end - 1] == b']' {
        end -= 1;
    }
    path_at_offset(text, end)
}

fn path_at_offset(text: &str, end: usize) -> String {
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < end {
        match bytes[i] {
            b'{' => stack.push(Frame::Object(None)),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object(key)) => *key = None,
                Some(Frame::Array(index)) => *index += 1,
                None => {}
            },
            b'"' => {
                // A string: a key when it is in an object and no key was read yet.
                let mut j = i + 1;
                let mut text_of = String::new();
                while j < bytes.len() && bytes[j] != b'"' {
                    if bytes[j] == b'\\' {
                        j += 1;
                    }
                    j += 1;
                }
                if let Some(raw) = text.get(i + 1..j.min(text.len())) {
                    text_of = serde_json::from_str::<String>(&format!("\"{raw}\""))
                        .unwrap_or_else(|_| raw.to_string());
                }
                if let Some(Frame::Object(key)) = stack.last_mut()
                    && key.is_none()
                {
                    *key = Some(text_of);
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object(Some(key)) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Object(None) => {}
            Frame::Array(index) => path.push_str(&format!("[{index}]")),
        }
    }
    if path.is_empty() {
        ".".to_string()
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use super::path_at;

    fn at(text: &str, marker: &str) -> String {
        let pos = text.find(marker).unwrap() + marker.len();
        let line = text[..pos].matches('\n').count() + 1;
        let column = pos - text[..pos].rfind('\n').map_or(0, |n| n + 1);
        path_at(text, line, column)
    }

    #[test]
    fn paths_of_positions() {
        let text = r#"{"a": 1, "nodes": [{"id": "x"}, {"id": "y", "cpu": "lots"}],
  "script": [{"action": "advance", "by": "1s"}, {"action": "fly"}], "k\"q": {"z": [1, [2, 3]]}}"#;
        assert_eq!(at(text, r#""lots""#), "nodes[1].cpu");
        assert_eq!(at(text, r#""cpu""#), "nodes[1].cpu");
        assert_eq!(at(text, r#""y", "cpu": "lots"}"#), "nodes[1]");
        assert_eq!(at(text, r#"{"action": "fly"}"#), "script[1]");
        assert_eq!(at(text, r#"[1, [2, 3"#), "k\"q.z[1][1]");
        assert_eq!(at(text, r#""a": 1"#), "a");
        assert_eq!(path_at(text, 1, 0), ".");
        assert_eq!(path_at(text, 99, 99), ".");
        // After the last element, the array is closed; stepping back finds the element.
        let pos = text.find(r#""fly"}]"#).unwrap() + r#""fly"}]"#.len();
        assert_eq!(
            path_at(text, 2, pos - text.find('\n').unwrap() - 1),
            "script"
        );
        assert_eq!(
            super::path_of_element_before(text, 2, pos - text.find('\n').unwrap() - 1),
            "script[1]"
        );
    }
}
