//! An ordered, named list of things a server offers (tools, prompts, resources, templates),
//! changeable at run time, with every page of its list result serialized in advance.
//!
//! Readers take a snapshot (an `Arc` clone) and never wait on writers for long: a change builds
//! a new snapshot, pages included, and swaps it in. Changes are rare; lists are read often. A
//! list the server did not make changeable is read in place, with no lock and no clone.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::engine::ResultText;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::ErrorObject;
use crate::protocol::decode_base64_lenient;
use base64::Engine as _;

/// Something listed by a paginated `…/list` method.
pub(crate) trait Listed: Clone + Send + Sync + 'static {
    /// What the list result shows of it.
    type Wire: Serialize;
    /// The result member holding the items (`tools`, `prompts`, …).
    const FIELD: &'static str;
    /// Its unique key (name or URI).
    fn key(&self) -> &str;
    /// Its wire form.
    fn wire(&self) -> &Self::Wire;
}

/// One version of a catalog.
pub(crate) struct Snapshot<T> {
    pub(crate) items: Vec<T>,
    /// Keys come from the server; lookups are by the peer's strings, once per call.
    index: HashMap<String, usize, foldhash::fast::RandomState>,
    pages: Vec<ResultText>,
}

impl<T: Listed> Snapshot<T> {
    fn build(items: Vec<T>, page_size: usize) -> Result<Self, String> {
        let mut index = HashMap::with_capacity_and_hasher(items.len(), foldhash::fast::RandomState::default());
        for (i, item) in items.iter().enumerate() {
            if index.insert(item.key().to_owned(), i).is_some() {
                return Err(item.key().to_owned());
            }
        }
        let page_size = page_size.max(1);
        let chunks: Vec<&[T]> = if items.is_empty() { vec![&[]] } else { items.chunks(page_size).collect() };
        let last = chunks.len() - 1;
        let mut pages = Vec::with_capacity(chunks.len());
        for (n, chunk) in chunks.into_iter().enumerate() {
            let mut result = Map::new();
            let wire: Vec<&T::Wire> = chunk.iter().map(Listed::wire).collect();
            result.insert(T::FIELD.to_owned(), serde_json::to_value(wire).map_err(|e| e.to_string())?);
            if n < last {
                result.insert("nextCursor".to_owned(), Value::String(encode_cursor::<T>((n + 1) * page_size)));
            }
            pages.push(ResultText::serialize(&result).map_err(|e| e.to_string())?);
        }
        Ok(Snapshot { items, index, pages })
    }

    /// The item with this key.
    pub(crate) fn get(&self, key: &str) -> Option<&T> {
        self.index.get(key).map(|&i| &self.items[i])
    }
}

fn encode_cursor<T: Listed>(offset: usize) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("{}:{offset}", T::FIELD).as_bytes())
}

/// The page number a cursor stands for, if it is one this catalog issued.
fn decode_cursor<T: Listed>(cursor: &str, page_size: usize) -> Option<usize> {
    let text = String::from_utf8(decode_base64_lenient(cursor)?).ok()?;
    let offset: usize = text.strip_prefix(T::FIELD)?.strip_prefix(':')?.parse().ok()?;
    (offset > 0 && offset.is_multiple_of(page_size)).then_some(offset / page_size)
}

/// A list of `T`, keyed by [`Listed::key`], changeable or not.
pub(crate) struct Catalog<T> {
    current: Current<T>,
    page_size: usize,
}

enum Current<T> {
    /// The list never changes.
    Fixed(Arc<Snapshot<T>>),
    /// The list may change at run time.
    Changing(RwLock<Arc<Snapshot<T>>>),
}

/// Why [`Catalog::update`] changed nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The change would use this key twice.
    Duplicate(String),
    /// The catalog was made fixed.
    Fixed,
}

impl<T: Listed> Catalog<T> {
    /// A catalog of `items`, in order, that [`update`](Self::update) may change if
    /// `changeable`; `Err(key)` when a key is used twice.
    pub(crate) fn new(items: Vec<T>, page_size: usize, changeable: bool) -> Result<Self, String> {
        let page_size = page_size.max(1);
        let snapshot = Arc::new(Snapshot::build(items, page_size)?);
        let current = if changeable { Current::Changing(RwLock::new(snapshot)) } else { Current::Fixed(snapshot) };
        Ok(Catalog { current, page_size })
    }

    /// The current version.
    pub(crate) fn snapshot(&self) -> Arc<Snapshot<T>> {
        match &self.current {
            Current::Fixed(s) => s.clone(),
            Current::Changing(lock) => match lock.read() {
                Ok(s) => s.clone(),
                Err(poisoned) => poisoned.into_inner().clone(),
            },
        }
    }

    /// Runs `read` on the current version: in place if the list is fixed, on a snapshot
    /// otherwise (no lock is held while `read` runs, so it may change the list itself).
    pub(crate) fn read<R>(&self, read: impl FnOnce(&Snapshot<T>) -> R) -> R {
        match &self.current {
            Current::Fixed(s) => read(s),
            Current::Changing(_) => read(&self.snapshot()),
        }
    }

    /// The item with this key.
    pub(crate) fn get(&self, key: &str) -> Option<T> {
        self.snapshot().get(key).cloned()
    }

    /// How many items there are.
    pub(crate) fn len(&self) -> usize {
        self.snapshot().items.len()
    }

    /// The list result for `cursor`; an unknown cursor is -32602.
    pub(crate) fn page(&self, cursor: Option<&str>) -> Result<ResultText, ErrorObject> {
        let snapshot = self.snapshot();
        let n = match cursor {
            None => 0,
            Some(c) => decode_cursor::<T>(c, self.page_size)
                .filter(|&n| n < snapshot.pages.len())
                .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor `{c}`")))?,
        };
        Ok(snapshot.pages[n].clone())
    }

    /// Applies `change` to a copy of the items and swaps the result in. Refused, with nothing
    /// changed, when the change would use a key twice or the catalog is fixed.
    pub(crate) fn update<R>(&self, change: impl FnOnce(&mut Vec<T>) -> R) -> Result<R, Refused> {
        let Current::Changing(lock) = &self.current else { return Err(Refused::Fixed) };
        let mut guard = match lock.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut items = guard.items.clone();
        let r = change(&mut items);
        *guard = Arc::new(Snapshot::build(items, self.page_size).map_err(Refused::Duplicate)?);
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Clone)]
    struct Item(String);
    impl Listed for Item {
        type Wire = String;
        const FIELD: &'static str = "items";
        fn key(&self) -> &str {
            &self.0
        }
        fn wire(&self) -> &String {
            &self.0
        }
    }

    fn items(n: usize) -> Vec<Item> {
        (0..n).map(|i| Item(format!("i{i}"))).collect()
    }

    fn page(c: &Catalog<Item>, cursor: Option<&str>) -> Value {
        serde_json::from_str(c.page(cursor).unwrap().get()).unwrap()
    }

    #[test]
    fn pages_chain_through_cursors() {
        let c = Catalog::new(items(5), 2, false).unwrap();
        let first = page(&c, None);
        assert_eq!(first["items"], json!(["i0", "i1"]));
        let second = page(&c, first["nextCursor"].as_str());
        assert_eq!(second["items"], json!(["i2", "i3"]));
        let third = page(&c, second["nextCursor"].as_str());
        assert_eq!(third, json!({"items": ["i4"]}));
        for bad in ["", "nope", "aXRlbXM6MQ==", "aXRlbXM6OA==", "dG9vbHM6Mg==", "\u{e9}"] {
            assert_eq!(c.page(Some(bad)).unwrap_err().code, -32602, "{bad}");
        }
        assert_eq!(page(&Catalog::new(items(0), 2, false).unwrap(), None), json!({"items": []}));
    }

    #[test]
    fn duplicate_keys_are_refused_and_change_nothing() {
        assert_eq!(Catalog::new(vec![Item("a".into()), Item("a".into())], 10, true).err(), Some("a".to_owned()));
        let c = Catalog::new(items(2), 10, true).unwrap();
        assert_eq!(c.update(|v| v.push(Item("i0".into()))).err(), Some(Refused::Duplicate("i0".into())));
        assert_eq!(c.len(), 2);
        c.update(|v| v.retain(|i| i.0 != "i0")).unwrap();
        assert_eq!(page(&c, None), json!({"items": ["i1"]}));
        assert_eq!(c.read(|s| s.get("i1").map(|i| i.0.clone())), Some("i1".to_owned()));

        // A fixed catalog is read in place and never changes.
        let fixed = Catalog::new(items(2), 10, false).unwrap();
        assert_eq!(fixed.update(|v| v.clear()).err(), Some(Refused::Fixed));
        assert_eq!(fixed.len(), 2);
        assert!(fixed.read(|s| s.get("i0").is_some()));
    }
}
