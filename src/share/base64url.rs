//! Unpadded base64url (RFC 4648 section 5), the alphabet that needs no
//! escaping in a URL fragment.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Encodes bytes, without padding.
pub fn encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            let index = (n >> (18 - 6 * i)) & 63;
            out.push(char::from(ALPHABET[index as usize]));
        }
    }
    out
}

/// Why text is not base64url.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Base64Error {
    /// A character outside the alphabet.
    #[error("character {ch:?} at position {at} is not base64url")]
    Char {
        /// The character.
        ch: char,
        /// Its position.
        at: usize,
    },
    /// A length no encoder produces.
    #[error("the data has an impossible length ({0} characters)")]
    Length(usize),
}

fn sextet(c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        // Also accept the standard alphabet, which some tools rewrite to.
        b'-' | b'+' => 62,
        b'_' | b'/' => 63,
        _ => return None,
    };
    Some(u32::from(v))
}

/// Decodes unpadded (or padded) base64url.
pub fn decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    let text = text.trim_end_matches('=');
    if text.len() % 4 == 1 {
        return Err(Base64Error::Length(text.len()));
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    let bytes = text.as_bytes();
    for (c, chunk) in bytes.chunks(4).enumerate() {
        let mut n = 0u32;
        for (i, &ch) in chunk.iter().enumerate() {
            let v = sextet(ch).ok_or_else(|| Base64Error::Char {
                ch: text[c * 4 + i..].chars().next().unwrap_or('?'),
                at: c * 4 + i,
            })?;
            n |= v << (18 - 6 * i);
        }
        let full = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&full[..chunk.len() - 1]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).as_deref(), Ok(plain.as_bytes()));
        }
        assert_eq!(encode(&[0xfb, 0xff]), "-_8");
        assert!(decode("Zm9vY").is_err());
        assert!(decode("Zm9v!").is_err());
        assert!(decode("é").is_err());
    }
}
