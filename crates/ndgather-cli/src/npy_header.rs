//! The `.npy` header, read as NumPy reads it (`numpy.lib.format.read_array_header_*`): a
//! length that NumPy caps, then a Python dict literal with exactly the keys `descr`,
//! `fortran_order` and `shape`, in either kind of quotes. The literal is parsed here, with
//! its nesting bounded, rather than by a general Python-literal parser, so that a hostile
//! header is an error and never deep recursion or an unchecked product.

/// The longest header NumPy reads unless told otherwise (`np.load`'s `max_header_size`).
pub const MAX_HEADER_LEN: usize = 10_000;

/// The most dimensions NumPy 2 gives an array (`NPY_MAXDIMS`); `np.load` refuses a header
/// with more.
pub const MAX_DIMS: usize = 64;

/// How deep lists and tuples may nest: a record dtype's fields nest a few levels at most.
const MAX_DEPTH: usize = 32;

/// A parsed `.npy` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The type string (`<f4`, `|S5`).
    pub descr: String,
    /// Whether the data is in Fortran order.
    pub fortran: bool,
    /// The shape, whose product with zeros left out fits in an `isize` (so no product of
    /// its dimensions, in any order, overflows).
    pub shape: Vec<usize>,
    /// Where the data starts, from the start of the `.npy` bytes.
    pub data_start: usize,
}

impl Header {
    /// The number of elements.
    pub fn count(&self) -> usize {
        self.shape.iter().product()
    }
}

/// A value of the Python literal subset a header uses.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Str(String),
    /// An integer: `None` if it does not fit in a `u64`, and whether it is negative.
    Int(Option<u64>, bool),
    Bool(bool),
    Tuple(Vec<Value>),
    List(Vec<Value>),
    Dict(Vec<(Value, Value)>),
    None,
}

/// Reads the header at the start of `bytes` (the magic, version, length and dict); errors
/// are NumPy's reasons, prefixed "bad header: " where the header itself is malformed.
pub fn read(bytes: &[u8]) -> Result<Header, String> {
    let (start, len) = bounds(bytes)?;
    let raw = &bytes[start..start + len];
    // Versions 1.0 and 2.0 are latin-1; 3.0 is UTF-8.
    let text: String = if bytes[6] == 3 {
        std::str::from_utf8(raw)
            .map_err(|_| "bad header: a version 3.0 header is not UTF-8".to_string())?
            .to_string()
    } else {
        raw.iter().map(|&b| char::from(b)).collect()
    };
    let value = Parser::new(&text).document()?;
    let Value::Dict(entries) = value else {
        return Err(format!("bad header: not a dictionary: {}", brief(&text)));
    };
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    let mut keys = Vec::new();
    for (key, value) in entries {
        let slot = match &key {
            Value::Str(k) if k == "descr" => &mut descr,
            Value::Str(k) if k == "fortran_order" => &mut fortran,
            Value::Str(k) if k == "shape" => &mut shape,
            _ => {
                keys.push(key);
                continue;
            }
        };
        // A repeated key keeps its last value, as in a Python dict.
        *slot = Some(value);
    }
    let (Some(descr), Some(fortran), Some(shape), true) = (descr, fortran, shape, keys.is_empty())
    else {
        return Err(format!(
            "bad header: it does not hold exactly the keys 'descr', 'fortran_order' and \
             'shape': {}",
            brief(&text)
        ));
    };
    let Value::Tuple(dims) = shape else {
        return Err(format!(
            "bad header: shape is not a tuple of integers: {}",
            brief(&text)
        ));
    };
    let Value::Bool(fortran) = fortran else {
        return Err("bad header: fortran_order is not True or False".to_string());
    };
    let descr = match descr {
        Value::Str(s) => s,
        Value::List(_) | Value::Tuple(_) => {
            return Err("structured (record) arrays are not supported".to_string())
        }
        _ => return Err("bad header: descr is not a dtype descriptor".to_string()),
    };
    if dims.len() > MAX_DIMS {
        return Err(format!(
            "maximum supported dimension for an ndarray is currently {MAX_DIMS}, found {} \
             (NumPy's limit)",
            dims.len()
        ));
    }
    let shape = dims
        .iter()
        .map(|d| match d {
            Value::Int(_, true) => Err("negative dimensions are not allowed".to_string()),
            Value::Int(Some(d), false) => usize::try_from(*d).map_err(|_| too_large(&dims)),
            Value::Int(None, false) => Err(too_large(&dims)),
            _ => Err(format!(
                "bad header: shape is not a tuple of integers: {}",
                brief(&text)
            )),
        })
        .collect::<Result<Vec<usize>, String>>()?;
    // NumPy's rule (with the item size, checked by the caller): the product of the
    // dimensions, zeros left out, fits.
    if crate::inplace::data_len(&shape, 1).is_none() {
        return Err(too_large(&dims));
    }
    Ok(Header {
        descr,
        fortran,
        shape,
        data_start: start + len,
    })
}

fn too_large(dims: &[Value]) -> String {
    let dims: Vec<String> = dims
        .iter()
        .map(|d| match d {
            Value::Int(Some(v), _) => v.to_string(),
            _ => "…".to_string(),
        })
        .collect();
    format!("shape ({}) is too large", dims.join(", "))
}

/// The start of the header's text, for a message.
fn brief(text: &str) -> String {
    const SHOWN: usize = 80;
    let text = text.trim_end();
    match text.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The header's text: where it starts and how long it is, after checking the magic bytes,
/// the version and NumPy's cap on the length.
fn bounds(bytes: &[u8]) -> Result<(usize, usize), String> {
    if !bytes.starts_with(b"\x93NUMPY") {
        return Err(crate::npy::not_npy(bytes));
    }
    // The magic is there: whatever is missing after it is a header cut short.
    let truncated = || {
        format!(
            "bad header: truncated (the data ends after {} bytes, inside the header's \
             version and length)",
            bytes.len()
        )
    };
    let version = bytes.get(6..8).ok_or_else(truncated)?;
    let width = match version {
        [1, 0] => 2,
        [2 | 3, 0] => 4,
        _ => {
            return Err(format!(
                "bad header: unsupported format version {}.{}",
                version[0], version[1]
            ))
        }
    };
    let start = 8 + width;
    let mut len_bytes = [0u8; 4];
    len_bytes[..width].copy_from_slice(bytes.get(8..start).ok_or_else(truncated)?);
    let len = u32::from_le_bytes(len_bytes) as usize;
    if len > MAX_HEADER_LEN {
        return Err(format!(
            "bad header: the header is {len} bytes, more than the {MAX_HEADER_LEN} that NumPy \
             reads (np.load's max_header_size)"
        ));
    }
    if start + len > bytes.len() {
        return Err(format!(
            "bad header: header of {len} bytes does not fit in {} bytes",
            bytes.len()
        ));
    }
    Ok((start, len))
}

/// How many of the first bytes of a `.npy` file hold its whole header, at most.
pub const MAX_PREFIX: usize = 12 + MAX_HEADER_LEN;

/// A recursive-descent parser of the literal subset, on chars.
struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser { text, at: 0 }
    }

    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!(
            "bad header: cannot parse the header's dict at character {}: {what}",
            self.text[..self.at].chars().count()
        ))
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.rest().chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += c.len_utf8();
            true
        } else {
            false
        }
    }

    /// The whole text: one value, then only whitespace (the padding and newline).
    fn document(&mut self) -> Result<Value, String> {
        let value = self.value(0)?;
        if self.peek().is_some() {
            return self.fail("text after the dict");
        }
        Ok(value)
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return self.fail("nested too deeply");
        }
        match self.peek() {
            Some('{') => self.dict(depth),
            Some('(') => self
                .sequence('(', ')', depth)
                .map(|(items, _)| Value::Tuple(items)),
            Some('[') => self
                .sequence('[', ']', depth)
                .map(|(items, _)| Value::List(items)),
            Some('\'' | '"') => self.string().map(Value::Str),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' => self.int(),
            Some(_) => self.word(),
            None => self.fail("the text ends early"),
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Value, String> {
        self.eat('{');
        let mut entries = Vec::new();
        loop {
            if self.eat('}') {
                return Ok(Value::Dict(entries));
            }
            let key = self.value(depth + 1)?;
            if !self.eat(':') {
                return self.fail("expected ':'");
            }
            let value = self.value(depth + 1)?;
            entries.push((key, value));
            if !self.eat(',') && self.peek() != Some('}') {
                return self.fail("expected ',' or '}'");
            }
        }
    }

    /// Items up to `close`, and whether a comma followed the last (`(1,)` is a tuple).
    fn sequence(
        &mut self,
        open: char,
        close: char,
        depth: usize,
    ) -> Result<(Vec<Value>, bool), String> {
        self.eat(open);
        let mut items = Vec::new();
        let mut comma = false;
        loop {
            if self.eat(close) {
                // `(x)` is x in parentheses, not a tuple.
                if open == '(' && items.len() == 1 && !comma {
                    return self.fail("a parenthesised value where a tuple was expected");
                }
                return Ok((items, comma));
            }
            items.push(self.value(depth + 1)?);
            comma = self.eat(',');
            if !comma && self.peek() != Some(close) {
                return self.fail(&format!("expected ',' or '{close}'"));
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let quote = self.peek().unwrap_or('\'');
        self.at += 1;
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                c if c == quote => {
                    self.at += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, e @ ('\\' | '\'' | '"'))) => out.push(e),
                    _ => {
                        self.at += i;
                        return self.fail("an escape other than \\\\, \\' or \\\"");
                    }
                },
                '\n' => break,
                c => out.push(c),
            }
        }
        self.fail("a string that does not end")
    }

    fn int(&mut self) -> Result<Value, String> {
        let rest = self.rest();
        let negative = rest.starts_with('-');
        let body = rest.trim_start_matches(['-', '+']);
        let signs = rest.len() - body.len();
        let len = body
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(body.len());
        let literal = &body[..len];
        // Python 2 wrote long integers with an `L`, which NumPy still reads.
        let digits = literal.trim_end_matches(['L', 'l']).replace('_', "");
        let (radix, digits) = match digits.get(..2) {
            Some("0x" | "0X") => (16, &digits[2..]),
            Some("0o" | "0O") => (8, &digits[2..]),
            Some("0b" | "0B") => (2, &digits[2..]),
            _ => (10, digits.as_str()),
        };
        if signs > 1 || digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return self.fail(&format!("'{literal}' is not an integer"));
        }
        self.at += signs + len;
        // All digits: an error here is only an overflow.
        Ok(Value::Int(
            u64::from_str_radix(digits, radix).ok(),
            negative,
        ))
    }

    fn word(&mut self) -> Result<Value, String> {
        let rest = self.rest();
        let len = rest
            .find(|c: char| !c.is_alphanumeric() && c != '_')
            .unwrap_or(rest.len());
        let value = match &rest[..len] {
            "True" => Value::Bool(true),
            "False" => Value::Bool(false),
            "None" => Value::None,
            _ => return self.fail("expected a string, number, True, False, None, tuple or list"),
        };
        self.at += len;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(dict: &str) -> Vec<u8> {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((dict.len() as u16).to_le_bytes());
        out.extend(dict.as_bytes());
        out
    }

    #[test]
    fn reads_both_quotes_and_python_2_longs() {
        let single = read(&npy(
            "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }\n",
        ));
        let double = read(&npy(
            r#"{"descr": "<i4", "fortran_order": False, "shape": (2L, 3,)}"#,
        ));
        assert_eq!(single.as_ref().map(|h| &h.shape), Ok(&vec![2, 3]));
        assert_eq!(
            single.map(|h| (h.descr, h.shape)),
            double.map(|h| (h.descr, h.shape))
        );
    }

    #[test]
    fn refuses_what_numpy_refuses() {
        for (dict, reason) in [
            ("{'descr': '<i4', 'fortran_order': False, 'shape': [2]}", "tuple"),
            ("{'descr': '<i4', 'fortran_order': 0, 'shape': (2,)}", "True or False"),
            ("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x': 1}", "exactly"),
            ("{'descr': '<i4', 'fortran_order': False, 'shape': (-1,)}", "negative"),
            ("{'descr': '<i4', 'fortran_order': False, 'shape': (2)}", "parenthesised"),
            ("{'descr': '<i4', 'fortran_order': False, 'shape': (0, 1099511627776, 1099511627776)}", "too large"),
            ("{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999999,)}", "too large"),
            ("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "deeply"),
        ] {
            let got = read(&npy(dict)).unwrap_err();
            assert!(got.contains(reason), "{dict}: {got}");
        }
    }
}
