//! One serializer for the three JSON forms of scenarios and actions: a
//! `serde_json::Value` (link encoding, action labels), compact text (the
//! script editor) and pretty text ([`super::print`]).
//!
//! Code size: `serde_json::to_value`, `to_string` and `to_string_pretty`
//! each compile a type's whole `Serialize` code once more (in the browser
//! bundle `Action`'s alone was ~10 KB per copy). Here a type is serialized
//! once, into a [`Tree`] that keeps the keys in the order written, and the
//! three forms are made from the tree by code that is not generic. The
//! result is the same as serde_json's: the tree replays the same calls to
//! serde_json's serializers (compact and pretty text), or builds the same
//! `Value` as `serde_json::to_value`. Scenarios have no 128-bit integers
//! and no `f32`: these are refused (an error) rather than compiled in, as
//! are integers beyond 64 bits.

use serde::Serialize;
use serde::ser::{self, Error as _};
use serde_json::{Error, Map, Number, Value};

/// A serialized document: serde's data model as serde_json sees it, with
/// map keys in the order they were written.
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    /// `null` (unit, `None`).
    Null,
    /// A boolean.
    Bool(bool),
    /// An unsigned integer.
    U64(u64),
    /// A signed integer.
    I64(i64),
    /// A float.
    F64(f64),
    /// A string (also a char, a unit variant's name).
    Str(String),
    /// A sequence (also a tuple, bytes).
    Seq(Vec<Tree>),
    /// A map or struct: keys and values in the order written.
    Map(Vec<(Tree, Tree)>),
}

/// Serializes `value` into a [`Tree`].
pub fn to_tree<T: Serialize + ?Sized>(value: &T) -> Result<Tree, Error> {
    value.serialize(TreeSerializer)
}

/// `serde_json::to_value`, through one `Serialize` instantiation.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, Error> {
    tree_to_value(to_tree(value)?)
}

/// `serde_json::to_string`, through one `Serialize` instantiation.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    tree_to_string(&to_tree(value)?)
}

/// `serde_json::to_string_pretty`, through one `Serialize` instantiation.
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    tree_to_string_pretty(&to_tree(value)?)
}

/// For `#[serde(serialize_with)]` on a scenario inside another type: the
/// value serialized through its [`Tree`], so a serializer other than the
/// tree's does not compile the scenario's whole `Serialize` once more (the
/// explore worker writes its results, a reproduction's scenario in them,
/// with serde_json's). The output is the same: the tree replays the calls.
pub fn serialize_through_tree<T, S>(value: &T, serializer: S) -> Result<S::Ok, S::Error>
where
    T: Serialize + ?Sized,
    S: ser::Serializer,
{
    to_tree(value)
        .map_err(<S::Error as ser::Error>::custom)?
        .serialize(serializer)
}

/// Compact JSON text of a tree.
pub fn tree_to_string(tree: &Tree) -> Result<String, Error> {
    serde_json::to_string(tree)
}

/// Pretty JSON text of a tree (two-space indent).
pub fn tree_to_string_pretty(tree: &Tree) -> Result<String, Error> {
    serde_json::to_string_pretty(tree)
}

/// The `Value` `serde_json::to_value` makes of what the tree was made of.
pub fn tree_to_value(tree: Tree) -> Result<Value, Error> {
    Ok(match tree {
        Tree::Null => Value::Null,
        Tree::Bool(b) => Value::Bool(b),
        Tree::U64(n) => Value::Number(n.into()),
        Tree::I64(n) => Value::Number(n.into()),
        Tree::F64(x) => Number::from_f64(x).map_or(Value::Null, Value::Number),
        Tree::Str(s) => Value::String(s),
        Tree::Seq(items) => Value::Array(
            items
                .into_iter()
                .map(tree_to_value)
                .collect::<Result<_, _>>()?,
        ),
        Tree::Map(entries) => {
            let mut map = Map::new();
            for (key, value) in entries {
                map.insert(key_text(key)?, tree_to_value(value)?);
            }
            Value::Object(map)
        }
    })
}

/// A map key as serde_json writes it into a `Value` (strings, and numbers
/// and booleans as text).
fn key_text(key: Tree) -> Result<String, Error> {
    match key {
        Tree::Str(s) => Ok(s),
        Tree::Bool(b) => Ok(b.to_string()),
        Tree::U64(n) => Ok(n.to_string()),
        Tree::I64(n) => Ok(n.to_string()),
        Tree::F64(_) => {
            let text = tree_to_string(&key)?;
            Ok(text.trim_matches('"').to_string())
        }
        Tree::Null | Tree::Seq(_) | Tree::Map(_) => Err(Error::custom("key must be a string")),
    }
}

impl Serialize for Tree {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use ser::{SerializeMap, SerializeSeq};
        match self {
            Tree::Null => serializer.serialize_unit(),
            Tree::Bool(b) => serializer.serialize_bool(*b),
            Tree::U64(n) => serializer.serialize_u64(*n),
            Tree::I64(n) => serializer.serialize_i64(*n),
            Tree::F64(x) => serializer.serialize_f64(*x),
            Tree::Str(s) => serializer.serialize_str(s),
            Tree::Seq(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Tree::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

/// The serializer that builds a [`Tree`].
struct TreeSerializer;

/// A sequence or map being built; `variant` wraps it as `{variant: …}`
/// (tuple and struct variants, as serde_json writes them).
struct Builder {
    variant: Option<&'static str>,
    items: Vec<Tree>,
    entries: Vec<(Tree, Tree)>,
    key: Option<Tree>,
    is_map: bool,
}

impl Builder {
    fn new(variant: Option<&'static str>, is_map: bool, len: Option<usize>) -> Builder {
        let len = len.unwrap_or(0);
        Builder {
            variant,
            items: if is_map {
                Vec::new()
            } else {
                Vec::with_capacity(len)
            },
            entries: if is_map {
                Vec::with_capacity(len)
            } else {
                Vec::new()
            },
            key: None,
            is_map,
        }
    }

    fn finish(self) -> Tree {
        let inner = if self.is_map {
            Tree::Map(self.entries)
        } else {
            Tree::Seq(self.items)
        };
        wrap(self.variant, inner)
    }

    fn element(&mut self, value: &(impl Serialize + ?Sized)) -> Result<(), Error> {
        let value = to_tree(value)?;
        self.push_element(value);
        Ok(())
    }

    /// Out of line: every element type's `element` shares it.
    #[inline(never)]
    fn push_element(&mut self, value: Tree) {
        self.items.push(value);
    }

    fn field(&mut self, key: &'static str, value: &(impl Serialize + ?Sized)) -> Result<(), Error> {
        let value = to_tree(value)?;
        self.push_field(key, value);
        Ok(())
    }

    /// Out of line: every field type's `field` shares it.
    #[inline(never)]
    fn push_field(&mut self, key: &'static str, value: Tree) {
        self.entries.push((Tree::Str(key.to_string()), value));
    }
}

fn wrap(variant: Option<&'static str>, inner: Tree) -> Tree {
    match variant {
        Some(name) => Tree::Map(vec![(Tree::Str(name.to_string()), inner)]),
        None => inner,
    }
}

impl ser::Serializer for TreeSerializer {
    type Ok = Tree;
    type Error = Error;
    type SerializeSeq = Builder;
    type SerializeTuple = Builder;
    type SerializeTupleStruct = Builder;
    type SerializeTupleVariant = Builder;
    type SerializeMap = Builder;
    type SerializeStruct = Builder;
    type SerializeStructVariant = Builder;

    fn serialize_bool(self, v: bool) -> Result<Tree, Error> {
        Ok(Tree::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Tree, Error> {
        Ok(Tree::I64(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Tree, Error> {
        Ok(Tree::I64(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Tree, Error> {
        Ok(Tree::I64(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Tree, Error> {
        Ok(Tree::I64(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Tree, Error> {
        // The same text and `Value` as serde_json's, within 64 bits.
        match (u64::try_from(v), i64::try_from(v)) {
            (Ok(n), _) => Ok(Tree::U64(n)),
            (_, Ok(n)) => Ok(Tree::I64(n)),
            _ => Err(Error::custom("integers beyond 64 bits are not supported")),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Tree, Error> {
        Ok(Tree::U64(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Tree, Error> {
        Ok(Tree::U64(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Tree, Error> {
        Ok(Tree::U64(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Tree, Error> {
        Ok(Tree::U64(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Tree, Error> {
        u64::try_from(v)
            .map(Tree::U64)
            .map_err(|_| Error::custom("integers beyond 64 bits are not supported"))
    }
    fn serialize_f32(self, _v: f32) -> Result<Tree, Error> {
        Err(Error::custom("f32 is not supported"))
    }
    fn serialize_f64(self, v: f64) -> Result<Tree, Error> {
        Ok(Tree::F64(v))
    }
    fn serialize_char(self, v: char) -> Result<Tree, Error> {
        Ok(Tree::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Tree, Error> {
        Ok(Tree::Str(v.to_string()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Tree, Error> {
        Ok(Tree::Seq(v.iter().map(|&b| Tree::U64(b.into())).collect()))
    }
    fn serialize_none(self) -> Result<Tree, Error> {
        Ok(Tree::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Tree, Error> {
        to_tree(value)
    }
    fn serialize_unit(self) -> Result<Tree, Error> {
        Ok(Tree::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Tree, Error> {
        Ok(Tree::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Tree, Error> {
        Ok(Tree::Str(variant.to_string()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Tree, Error> {
        to_tree(value)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Tree, Error> {
        Ok(wrap(Some(variant), to_tree(value)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Builder, Error> {
        Ok(Builder::new(None, false, len))
    }
    fn serialize_tuple(self, len: usize) -> Result<Builder, Error> {
        Ok(Builder::new(None, false, Some(len)))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Builder, Error> {
        Ok(Builder::new(None, false, Some(len)))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Builder, Error> {
        Ok(Builder::new(Some(variant), false, Some(len)))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Builder, Error> {
        Ok(Builder::new(None, true, len))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Builder, Error> {
        Ok(Builder::new(None, true, Some(len)))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Builder, Error> {
        Ok(Builder::new(Some(variant), true, Some(len)))
    }
}

impl ser::SerializeSeq for Builder {
    type Ok = Tree;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<Tree, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTuple for Builder {
    type Ok = Tree;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<Tree, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleStruct for Builder {
    type Ok = Tree;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<Tree, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleVariant for Builder {
    type Ok = Tree;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<Tree, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeMap for Builder {
    type Ok = Tree;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(to_tree(key)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| Error::custom("serialize_value called before serialize_key"))?;
        let value = to_tree(value)?;
        self.entries.push((key, value));
        Ok(())
    }
    fn end(self) -> Result<Tree, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeStruct for Builder {
    type Ok = Tree;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<Tree, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeStructVariant for Builder {
    type Ok = Tree;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<Tree, Error> {
        Ok(self.finish())
    }
}
