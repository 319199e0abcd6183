//! Tensors from nested-list literals as the TensorFlow and NumPy docs write them:
//! `[[0, 1.0], [2, 3]]`, `['a', 'b']`, `[b"a", b"b"]`, `True`, `3`.
//!
//! Dtypes follow `tf.constant`'s defaults: integers are `int32` (`int64` when a value does
//! not fit), any number with a point or exponent makes the whole literal `float32`, `True` and
//! `False` are `bool`, quoted text is `string` and `b`-quoted text is `bytes`. An empty list
//! is `int32`, so that `[]` can be indices.
//!
//! ```
//! use ndgather::DType;
//! use ndgather_cli::literal;
//! let t = literal::parse("[[0, 1.0, 2.0], [10.0, 11.0, 12.0]]").unwrap();
//! assert_eq!((t.dtype(), t.shape()), (DType::F32, &[2usize, 3][..]));
//! assert_eq!(literal::parse("3").unwrap().shape(), &[] as &[usize]);
//! assert!(literal::parse("[[1], [2, 3]]").is_err());
//! ```

use ndgather::Tensor;

/// Why a literal could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read literal at character {position}: {reason}")]
pub struct LiteralError {
    /// 0-based character offset where reading stopped.
    pub position: usize,
    /// What was wrong.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    List(Vec<Node>),
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    Bytes(Vec<u8>),
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn fail<T>(&self, reason: impl Into<String>) -> Result<T, LiteralError> {
        Err(LiteralError {
            position: self.pos,
            reason: reason.into(),
        })
    }

    fn skip_ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn value(&mut self, depth: usize) -> Result<Node, LiteralError> {
        if depth > 64 {
            return self.fail("nested deeper than 64 levels");
        }
        self.skip_ws();
        match self.peek() {
            None => self.fail("unexpected end"),
            Some('[') => self.list(depth),
            Some('\'') | Some('"') => Ok(Node::Str(
                String::from_utf8_lossy(&self.quoted()?).into_owned(),
            )),
            Some('b') if matches!(self.chars.get(self.pos + 1), Some('\'') | Some('"')) => {
                self.pos += 1;
                Ok(Node::Bytes(self.quoted()?))
            }
            Some(c) if c.is_ascii_alphabetic() => self.word(),
            Some(_) => self.number(),
        }
    }

    fn list(&mut self, depth: usize) -> Result<Node, LiteralError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(']') {
                self.pos += 1;
                return Ok(Node::List(items));
            }
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(']') => {}
                _ => return self.fail("expected ',' or ']'"),
            }
        }
    }

    fn quoted(&mut self) -> Result<Vec<u8>, LiteralError> {
        let quote = self.chars[self.pos];
        self.pos += 1;
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return self.fail("unterminated string"),
                Some(c) if c == quote => {
                    self.pos += 1;
                    return Ok(out.into_bytes());
                }
                Some('\\') => {
                    self.pos += 1;
                    let escaped = match self.peek() {
                        Some('n') => '\n',
                        Some('t') => '\t',
                        Some('0') => '\0',
                        Some(c @ ('\\' | '\'' | '"')) => c,
                        _ => return self.fail("unknown escape"),
                    };
                    out.push(escaped);
                    self.pos += 1;
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn word(&mut self) -> Result<Node, LiteralError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.pos += 1;
        }
        let word: String = self.chars[start..self.pos].iter().collect();
        match word.as_str() {
            "True" | "true" => Ok(Node::Bool(true)),
            "False" | "false" => Ok(Node::Bool(false)),
            "nan" | "NaN" => Ok(Node::Float(f64::NAN)),
            "inf" => Ok(Node::Float(f64::INFINITY)),
            _ => {
                self.pos = start;
                self.fail(format!("unknown word '{word}'"))
            }
        }
    }

    fn number(&mut self) -> Result<Node, LiteralError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'))
        {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos]
            .iter()
            .filter(|&&c| c != '_')
            .collect();
        if text == "-inf" {
            return Ok(Node::Float(f64::NEG_INFINITY));
        }
        let is_float = text.contains(['.', 'e', 'E']);
        let parsed = if is_float {
            text.parse::<f64>().ok().map(Node::Float)
        } else {
            text.parse::<i128>().ok().map(Node::Int)
        };
        match parsed {
            Some(n) => Ok(n),
            None => {
                self.pos = start;
                self.fail(format!("'{text}' is not a number"))
            }
        }
    }
}

fn shape_of(node: &Node, shape: &mut Vec<usize>) {
    if let Node::List(items) = node {
        shape.push(items.len());
        if let Some(first) = items.first() {
            shape_of(first, shape);
        }
    }
}

fn flatten<'n>(node: &'n Node, shape: &[usize], out: &mut Vec<&'n Node>) -> Result<(), String> {
    match (node, shape.split_first()) {
        (Node::List(items), Some((&n, rest))) if items.len() == n => {
            items.iter().try_for_each(|item| flatten(item, rest, out))
        }
        (Node::List(_), _) => Err("ragged nested list: rows differ in length or depth".to_string()),
        (_, None) => {
            out.push(node);
            Ok(())
        }
        (_, Some(_)) => {
            Err("ragged nested list: a scalar stands where a list is expected".to_string())
        }
    }
}

/// Reads a nested-list literal into a tensor.
pub fn parse(text: &str) -> Result<Tensor, LiteralError> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
    };
    let root = p.value(0)?;
    p.skip_ws();
    if p.pos != p.chars.len() {
        return p.fail("unexpected text after the literal");
    }
    let mut shape = Vec::new();
    shape_of(&root, &mut shape);
    let mut leaves = Vec::new();
    flatten(&root, &shape, &mut leaves).map_err(|reason| LiteralError {
        position: 0,
        reason,
    })?;
    let err = |reason: &str| LiteralError {
        position: 0,
        reason: reason.to_string(),
    };
    let all = |f: fn(&Node) -> bool| leaves.iter().all(|n| f(n));
    let build = |t: Result<Tensor, ndgather::Error>| t.map_err(|e| err(&e.to_string()));
    if leaves.is_empty() || all(|n| matches!(n, Node::Int(_))) {
        let ints: Vec<i128> = leaves
            .iter()
            .filter_map(|n| if let Node::Int(i) = n { Some(*i) } else { None })
            .collect();
        if let Ok(v) = ints
            .iter()
            .map(|&i| i32::try_from(i))
            .collect::<Result<Vec<i32>, _>>()
        {
            return build(Tensor::from_shape_vec(&shape, v));
        }
        if let Ok(v) = ints
            .iter()
            .map(|&i| i64::try_from(i))
            .collect::<Result<Vec<i64>, _>>()
        {
            return build(Tensor::from_shape_vec(&shape, v));
        }
        if let Ok(v) = ints
            .iter()
            .map(|&i| u64::try_from(i))
            .collect::<Result<Vec<u64>, _>>()
        {
            return build(Tensor::from_shape_vec(&shape, v));
        }
        return Err(err("integer out of the range of int64 and uint64"));
    }
    if all(|n| matches!(n, Node::Int(_) | Node::Float(_))) {
        let v = leaves
            .iter()
            .map(|n| match n {
                Node::Int(i) => *i as f32,
                Node::Float(f) => *f as f32,
                _ => 0.0,
            })
            .collect();
        return build(Tensor::from_shape_vec(&shape, v));
    }
    if all(|n| matches!(n, Node::Bool(_))) {
        let v = leaves
            .iter()
            .map(|n| matches!(n, Node::Bool(true)))
            .collect();
        return build(Tensor::from_shape_vec(&shape, v));
    }
    if all(|n| matches!(n, Node::Str(_))) {
        let v = leaves
            .iter()
            .map(|n| {
                if let Node::Str(s) = n {
                    s.clone()
                } else {
                    String::new()
                }
            })
            .collect();
        return build(Tensor::from_shape_vec(&shape, v));
    }
    if all(|n| matches!(n, Node::Bytes(_))) {
        let v = leaves
            .iter()
            .map(|n| {
                if let Node::Bytes(b) = n {
                    b.clone()
                } else {
                    Vec::new()
                }
            })
            .collect();
        return build(Tensor::from_shape_vec(&shape, v));
    }
    Err(err(
        "elements of different kinds (numbers, booleans, strings, bytes) in one literal",
    ))
}

#[cfg(test)]
mod tests {
    use super::parse;
    use ndgather::{DType, Tensor, TensorElement};

    fn tensor<T: TensorElement>(shape: &[usize], data: Vec<T>) -> Tensor {
        Tensor::from_shape_vec(shape, data).unwrap()
    }

    #[test]
    fn literals_and_their_dtypes() {
        let t = parse("[[1, 2], [3, 4]]").unwrap();
        assert_eq!((t.dtype(), t.shape()), (DType::I32, &[2usize, 2][..]));
        assert_eq!(parse("[3000000000]").unwrap().dtype(), DType::I64);
        assert_eq!(parse("[True, false]").unwrap().dtype(), DType::Bool);
        assert_eq!(
            parse(r#"[b"a", b'b']"#).unwrap(),
            tensor(&[2], vec![b"a".to_vec(), b"b".to_vec()])
        );
        assert_eq!(
            parse(r#"["a", 'b\'c']"#).unwrap(),
            tensor(&[2], vec!["a".to_string(), "b'c".to_string()])
        );
        assert_eq!(parse("[[], []]").unwrap().shape(), &[2, 0]);
        assert_eq!(parse(" -1.5e1 ").unwrap(), tensor(&[], vec![-15.0f32]));
        for bad in [
            "[1, [2]]", "[[1], 2]", "[1, 'a']", "[1,", "[1] x", "'abc", "[1e]", "nope", "",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(parse(&deep).is_err());
    }
}
