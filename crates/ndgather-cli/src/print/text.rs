//! Strings and bytes as Python's `repr` writes them (what NumPy prints for each element).

/// The quote Python picks: `'`, unless the text has a `'` and no `"`.
fn quote(has_single: bool, has_double: bool) -> char {
    if has_single && !has_double {
        '"'
    } else {
        '\''
    }
}

/// Characters Python's `str.isprintable` rejects besides the control characters: the
/// separators other than the space and the common format characters.
fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(c as u32,
            0xA0 | 0xAD | 0x1680 | 0x2000..=0x200F | 0x2028..=0x202F | 0x205F..=0x206F
            | 0x3000 | 0xFEFF | 0xFFF9..=0xFFFB)
}

/// `repr(s)` of a Python `str`.
pub fn str_repr(s: &str) -> String {
    let q = quote(s.contains('\''), s.contains('"'));
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if unprintable(c) => {
                let n = c as u32;
                if n < 0x100 {
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// `repr(b)` of a Python `bytes`.
pub fn bytes_repr(b: &[u8]) -> String {
    let q = quote(b.contains(&b'\''), b.contains(&b'"'));
    let mut out = String::with_capacity(b.len() + 3);
    out.push('b');
    out.push(q);
    for &byte in b {
        match byte {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            c if char::from(c) == q => {
                out.push('\\');
                out.push(q);
            }
            0x20..=0x7e => out.push(char::from(byte)),
            _ => out.push_str(&format!("\\x{byte:02x}")),
        }
    }
    out.push(q);
    out
}
