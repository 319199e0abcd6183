//! Tensors of strings stored as TensorFlow's and Arrow's string arrays are: one buffer of
//! bytes, and each element's span of it. [`Tensor`](crate::Tensor)'s `string` and `bytes`
//! dtypes hold a [`Strings`]; the typed `ndarray` API keeps `String` and `Vec<u8>` elements.
//!
//! The type and its conversions are here; its gathers are in `string_gather`.

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};
use std::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
    impl Sealed for String {}
    impl Sealed for Vec<u8> {}
}

/// The element types of a [`Strings`]: `String` (UTF-8 text) and `Vec<u8>` (any bytes).
///
/// Sealed: implemented for these two only.
pub trait StringElement: crate::Element + sealed::Sealed {
    /// How an element is borrowed from a [`Strings`]: `str` or `[u8]`.
    type Ref: ?Sized + AsRef<[u8]> + ToOwned<Owned = Self> + PartialEq + std::fmt::Debug;

    /// The element's borrowed form of `bytes`, or `None` when the bytes cannot be one (not
    /// UTF-8, for `String`).
    fn from_bytes(bytes: &[u8]) -> Option<&Self::Ref>;

    /// The element, borrowed.
    fn as_ref_elem(&self) -> &Self::Ref;
}

impl StringElement for String {
    type Ref = str;
    fn from_bytes(bytes: &[u8]) -> Option<&str> {
        std::str::from_utf8(bytes).ok()
    }
    fn as_ref_elem(&self) -> &str {
        self
    }
}

impl StringElement for Vec<u8> {
    type Ref = [u8];
    fn from_bytes(bytes: &[u8]) -> Option<&[u8]> {
        Some(bytes)
    }
    fn as_ref_elem(&self) -> &[u8] {
        self
    }
}

/// Where one element lies in a [`Strings`]' buffer; [`Span::FILL`] marks an element that the
/// gather's policy fills (an ignored or filled bad index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl Span {
    /// The span the core's gather writes where an index is bad and the policy fills: its
    /// `Default`, which no element's span equals (no buffer reaches `usize::MAX`).
    pub(crate) const FILL: Span = Span {
        start: usize::MAX,
        end: usize::MAX,
    };
}

impl Default for Span {
    fn default() -> Span {
        Span::FILL
    }
}

/// A tensor of strings (`Strings<String>`) or byte strings (`Strings<Vec<u8>>`) of any shape,
/// stored as one byte buffer and each element's span of it, in row-major order. What a
/// [`Tensor`](crate::Tensor) of dtype `string` or `bytes` holds.
///
/// ```
/// use ndgather::registry::Input;
/// use ndgather::{ndarray::array, GatherOptions, Op, OpDef, Out, Strings, Tensor};
///
/// let words = Tensor::String(Strings::from_array(&array!["zero", "one", "two", "three"]));
/// let ids = Tensor::from(array![3, 0, 3].into_dyn());
/// let inputs = [Input::from(words.view()), Input::from(ids.view())];
/// let op = Op::Gather(GatherOptions::new());
/// let Tensor::String(picked) = op.run(&inputs, Out::New)?.unwrap().into_dense()? else {
///     unreachable!("a gather of strings gives strings")
/// };
/// assert_eq!(picked.shape(), &[3]);
/// assert_eq!(picked.iter().collect::<Vec<_>>(), ["three", "zero", "three"]);
/// assert_eq!(picked.to_array(), array!["three", "zero", "three"].mapv(String::from).into_dyn());
/// # Ok::<(), ndgather::Error>(())
/// ```
#[derive(Clone)]
pub struct Strings<T> {
    pub(crate) shape: Vec<usize>,
    pub(crate) spans: Vec<Span>,
    pub(crate) bytes: Vec<u8>,
    pub(crate) element: PhantomData<T>,
}

impl<T: StringElement> Strings<T> {
    /// The strings of an array (of `String`, `&str`, `Vec<u8>`, `&[u8]`, …), in row-major
    /// order.
    pub fn from_array<S, D, E>(array: &ArrayBase<S, D>) -> Strings<T>
    where
        S: Data<Elem = E>,
        D: Dimension,
        E: AsRef<T::Ref>,
    {
        Strings::packed(array.shape(), array.iter().map(|e| e.as_ref()))
    }

    /// A tensor of `shape` from exactly its elements, in row-major order.
    fn packed<'a>(shape: &[usize], elements: impl Iterator<Item = &'a T::Ref> + Clone) -> Strings<T>
    where
        T::Ref: 'a,
    {
        let total = elements.clone().map(|e| e.as_ref().len()).sum();
        let mut out = Strings {
            shape: shape.to_vec(),
            spans: Vec::with_capacity(elements.size_hint().0),
            bytes: Vec::with_capacity(total),
            element: PhantomData,
        };
        for e in elements {
            out.push(e);
        }
        out
    }

    pub(crate) fn push(&mut self, element: &T::Ref) {
        let bytes = element.as_ref();
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        self.spans.push(Span {
            start,
            end: self.bytes.len(),
        });
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The element count.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The bytes of all elements together.
    pub fn byte_len(&self) -> usize {
        self.spans.iter().map(|s| s.end - s.start).sum()
    }

    /// The element at a row-major position, or `None` past the end.
    pub fn get(&self, position: usize) -> Option<&T::Ref> {
        let span = self.spans.get(position)?;
        T::from_bytes(self.bytes.get(span.start..span.end)?)
    }

    /// The elements in row-major order.
    pub fn iter(&self) -> impl Iterator<Item = &T::Ref> + '_ {
        // Every span lies in the buffer, and a `Strings<String>` holds only whole `str`s
        // (copied from `str`s, or from another `Strings<String>`), so `get` finds every
        // element and nothing is skipped.
        (0..self.len()).filter_map(|p| self.get(p))
    }

    /// The elements as an array of owned values.
    pub fn to_array(&self) -> ArrayD<T> {
        let values: Vec<T> = self.iter().map(ToOwned::to_owned).collect();
        ArrayD::from_shape_vec(IxDyn(&self.shape), values)
            .expect("a Strings holds one span per element of its shape")
    }
}

/// A tensor's buffers go back to the pool of fresh outputs ([`crate::memory::recycle`]) when it is
/// dropped: the next large gather of strings reuses them instead of faulting in new pages.
impl<T> Drop for Strings<T> {
    fn drop(&mut self) {
        crate::mem::recycle::give_back(std::mem::take(&mut self.spans));
        crate::mem::recycle::give_back(std::mem::take(&mut self.bytes));
    }
}

impl<T: StringElement> PartialEq for Strings<T> {
    fn eq(&self, other: &Strings<T>) -> bool {
        self.shape == other.shape && self.iter().eq(other.iter())
    }
}

impl<T: StringElement> std::fmt::Debug for Strings<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Strings")
            .field("shape", &self.shape)
            .field("elements", &self.iter().collect::<Vec<_>>())
            .finish()
    }
}

impl<T: StringElement> From<ArrayD<T>> for Strings<T> {
    fn from(array: ArrayD<T>) -> Strings<T> {
        Strings::packed(array.shape(), array.iter().map(T::as_ref_elem))
    }
}
