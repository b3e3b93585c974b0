//! The compact binary form of a JSON value used inside version-1 links.
//!
//! A value is one tag byte and its data. Object keys and common string values
//! (action names, statuses, profile names, durations, node names) are one
//! byte each from frozen tables; any other string is written once and later
//! repeats of it are back-references. Integers are LEB128 varints; small
//! non-negative ones fit in the tag byte.
//!
//! The tables are part of link format version 1: they are frozen. A later
//! link version may add a new table, never change this one.

use serde_json::{Map, Number, Value};

/// Object keys of the scenario format (version 1 tables: frozen).
const KEYS: &[&str] = &[
    "version",
    "name",
    "description",
    "source",
    "profile",
    "profiles",
    "seed",
    "settings",
    "server",
    "nodes",
    "jobs",
    "script",
    "id",
    "datacenter",
    "node_pool",
    "class",
    "cpu",
    "memory_mb",
    "registered",
    "agent",
    "type",
    "priority",
    "datacenters",
    "groups",
    "count",
    "max_client_disconnect",
    "stop_after_client_disconnect",
    "prevent_reschedule_on_lost",
    "disconnect",
    "reschedule",
    "update",
    "ephemeral_disk",
    "tasks",
    "lost_after",
    "replace",
    "reconcile",
    "stop_on_client_after",
    "attempts",
    "interval",
    "delay",
    "delay_function",
    "max_delay",
    "unlimited",
    "max_parallel",
    "canary",
    "auto_revert",
    "auto_promote",
    "min_healthy_time",
    "healthy_deadline",
    "progress_deadline",
    "sticky",
    "migrate",
    "size_mb",
    "leader",
    "config",
    "kill_timeout",
    "action",
    "job",
    "group",
    "enable",
    "eligible",
    "node",
    "allocs",
    "alloc",
    "task",
    "call",
    "position",
    "by",
    "eval",
    "note",
    "checks",
    "text",
    "status",
    "exists",
    "client_status",
    "desired_status",
    "job_version",
    "on_node",
    "last_alloc_state",
    "desired_tg_updates",
    "equals",
    "auto_evals",
    "auto_clients",
    "latency",
    "task_start",
    "checkpoint_every",
    "max_events_per_step",
    "min_heartbeat_ttl",
    "max_heartbeats_per_second",
    "heartbeat_grace",
    "preemption",
    "system",
    "service",
    "batch",
    "data_dir",
    "alloc_dir",
    "chroot_env",
    "image",
    "command",
    "args",
    "place",
    "stop",
    "ignore",
    "inplace_update",
    "destructive_update",
    "reconnect",
    "preemptions",
];

/// Common string values (version 1 tables: frozen).
const VALUES: &[&str] = &[
    "register_job",
    "update_job",
    "stop_job",
    "drain_node",
    "set_eligibility",
    "heartbeat",
    "update_alloc",
    "get_allocs",
    "register",
    "task_fail",
    "task_complete",
    "task_restart",
    "link_down",
    "link_up",
    "hold",
    "release",
    "deliver",
    "reorder",
    "drop",
    "delay",
    "advance",
    "step",
    "process_eval",
    "run_until_idle",
    "assert",
    "gc",
    "note",
    "latest",
    "1.1.0",
    "1.2.0",
    "1.2.6",
    "1.3.0",
    "1.4.2",
    "1.4.3",
    "1.5.0",
    "1.5.4",
    "1.6.0",
    "1.7.0",
    "1.8.0",
    "1.9.1",
    "1.10.0",
    "1.10.2",
    "1.11.0",
    "1.11.2",
    "2.0.0",
    "2.0.3",
    "running",
    "pending",
    "complete",
    "failed",
    "lost",
    "unknown",
    "run",
    "stop",
    "evict",
    "ready",
    "down",
    "disconnected",
    "initializing",
    "node-a",
    "node-b",
    "node-c",
    "node-d",
    "node-e",
    "node-f",
    "node-1",
    "node-2",
    "node-3",
    "web",
    "api",
    "cache",
    "db",
    "worker",
    "server",
    "dc1",
    "dc2",
    "default",
    "service",
    "batch",
    "system",
    "sysbatch",
    "best_score",
    "keep_original",
    "keep_replacement",
    "longest_running",
    "constant",
    "exponential",
    "fibonacci",
    "0s",
    "1s",
    "2s",
    "3s",
    "5s",
    "10s",
    "15s",
    "20s",
    "30s",
    "1m",
    "2m",
    "3m",
    "5m",
    "10m",
    "15m",
    "30m",
    "1h",
    "100ms",
    "500ms",
    "UpdateStatus",
    "UpdateAlloc",
    "GetClientAllocs",
    "Register",
    "Node.UpdateStatus",
    "Node.UpdateAlloc",
    "Node.GetClientAllocs",
    "Node.Register",
    "Alloc.GetAlloc",
    "Alloc.GetAllocs",
    "Node.GetAllocs",
    "job-register",
    "node-update",
    "alloc-failure",
    "job-deregister",
    "reconnect",
    "docker",
    "exec",
    "raw_exec",
    "image",
    "web:v0",
    "web:v1",
    "web:v2",
    "",
];

// Tags. Values 0..=9 are the JSON kinds; KEY_BASE.. / VALUE_BASE.. / SMALL_BASE..
// carry their table index or number in the tag itself.
const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const UINT: u8 = 3;
const NEG: u8 = 4;
const FLOAT: u8 = 5;
const BACKREF: u8 = 6;
const STRING: u8 = 7;
const ARRAY: u8 = 8;
const OBJECT: u8 = 9;
const VALUE_BASE: u8 = 16;
const SMALL_BASE: u8 = 192;
const SMALL_MAX: u64 = (u8::MAX - SMALL_BASE) as u64;

/// Deepest nesting the decoder accepts.
pub const MAX_DEPTH: usize = 64;

/// Why a binary value does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// The data ends inside a value.
    #[error("the data ends early at byte {0}")]
    Truncated(usize),
    /// An unknown tag byte.
    #[error("unknown tag {tag} at byte {at}")]
    Tag {
        /// The tag.
        tag: u8,
        /// Offset.
        at: usize,
    },
    /// A table index or back-reference out of range.
    #[error("bad reference {index} at byte {at}")]
    Reference {
        /// The index.
        index: u64,
        /// Offset.
        at: usize,
    },
    /// A varint longer than 64 bits.
    #[error("number too large at byte {0}")]
    Overflow(usize),
    /// A string that is not UTF-8.
    #[error("text is not UTF-8 at byte {0}")]
    Utf8(usize),
    /// Nested too deeply.
    #[error("nested deeper than {MAX_DEPTH} levels")]
    Depth,
    /// A float that is not finite.
    #[error("not a finite number at byte {0}")]
    Float(usize),
    /// Bytes left over after the value.
    #[error("{0} bytes left over after the scenario")]
    Trailing(usize),
}

/// Appends a LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Writes values; remembers the strings it has written for back-references.
#[derive(Default)]
pub struct Encoder {
    /// The output.
    pub out: Vec<u8>,
    seen: Vec<String>,
}

impl Encoder {
    /// Encodes one value.
    pub fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.out.push(NULL),
            Value::Bool(false) => self.out.push(FALSE),
            Value::Bool(true) => self.out.push(TRUE),
            Value::Number(n) => self.number(n),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.out.push(ARRAY);
                put_varint(&mut self.out, items.len() as u64);
                for item in items {
                    self.value(item);
                }
            }
            Value::Object(map) => {
                self.out.push(OBJECT);
                put_varint(&mut self.out, map.len() as u64);
                // Sorted explicitly, so the bytes do not depend on serde_json's
                // `preserve_order` feature.
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                crate::cold_sort::sort_by(&mut entries, |a, b| a.0.cmp(b.0));
                for (key, item) in entries {
                    self.key(key);
                    self.value(item);
                }
            }
        }
    }

    fn number(&mut self, n: &Number) {
        if let Some(u) = n.as_u64() {
            if u <= SMALL_MAX {
                self.out.push(SMALL_BASE + u as u8);
            } else {
                self.out.push(UINT);
                put_varint(&mut self.out, u);
            }
        } else if let Some(i) = n.as_i64() {
            // Negative: store -(i + 1) as unsigned.
            self.out.push(NEG);
            put_varint(&mut self.out, (-(i + 1)) as u64);
        } else {
            self.out.push(FLOAT);
            let f = n.as_f64().unwrap_or(0.0);
            self.out.extend_from_slice(&f.to_le_bytes());
        }
    }

    fn key(&mut self, key: &str) {
        match KEYS.iter().position(|k| *k == key) {
            Some(index) => put_varint(&mut self.out, index as u64 + 1),
            None => {
                self.out.push(0);
                self.string(key);
            }
        }
    }

    /// Encodes a string.
    pub fn string(&mut self, s: &str) {
        if let Some(index) = VALUES.iter().position(|v| *v == s) {
            self.out.push(VALUE_BASE + index as u8);
        } else if let Some(index) = self.seen.iter().position(|v| v == s) {
            self.out.push(BACKREF);
            put_varint(&mut self.out, index as u64);
        } else {
            self.out.push(STRING);
            put_varint(&mut self.out, s.len() as u64);
            self.out.extend_from_slice(s.as_bytes());
            self.seen.push(s.to_string());
        }
    }
}

/// Reads values written by [`Encoder`].
pub struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    seen: Vec<String>,
}

impl<'a> Decoder<'a> {
    /// A decoder over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Decoder {
            data,
            pos: 0,
            seen: Vec::new(),
        }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn byte(&mut self) -> Result<u8, ValueError> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or(ValueError::Truncated(self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    /// Reads a LEB128 varint.
    pub fn varint(&mut self) -> Result<u64, ValueError> {
        let start = self.pos;
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(ValueError::Overflow(start));
            }
            n |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(ValueError::Overflow(start))
    }

    /// A length that cannot exceed what is left (every item takes a byte).
    fn length(&mut self) -> Result<usize, ValueError> {
        let at = self.pos;
        let n = self.varint()?;
        if n > self.remaining() as u64 {
            return Err(ValueError::Truncated(at));
        }
        Ok(n as usize)
    }

    /// Reads one value.
    pub fn value(&mut self, depth: usize) -> Result<Value, ValueError> {
        if depth > MAX_DEPTH {
            return Err(ValueError::Depth);
        }
        let at = self.pos;
        let tag = self.byte()?;
        Ok(match tag {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            UINT => Value::Number(self.varint()?.into()),
            NEG => {
                let n = self.varint()?;
                let i = i64::try_from(n).map_err(|_| ValueError::Overflow(at))?;
                Value::Number((-i - 1).into())
            }
            FLOAT => {
                let end = self.pos + 8;
                let bytes = self
                    .data
                    .get(self.pos..end)
                    .ok_or(ValueError::Truncated(self.pos))?;
                let mut raw = [0u8; 8];
                raw.copy_from_slice(bytes);
                self.pos = end;
                let f = f64::from_le_bytes(raw);
                Value::Number(Number::from_f64(f).ok_or(ValueError::Float(at))?)
            }
            ARRAY => {
                let n = self.length()?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.value(depth + 1)?);
                }
                Value::Array(items)
            }
            OBJECT => {
                let n = self.length()?;
                let mut map = Map::new();
                for _ in 0..n {
                    let key = self.key()?;
                    let item = self.value(depth + 1)?;
                    map.insert(key, item);
                }
                Value::Object(map)
            }
            SMALL_BASE..=u8::MAX => Value::Number(u64::from(tag - SMALL_BASE).into()),
            _ => Value::String(self.string_tagged(tag, at)?),
        })
    }

    fn key(&mut self) -> Result<String, ValueError> {
        let at = self.pos;
        let index = self.varint()?;
        if index == 0 {
            let tag_at = self.pos;
            let tag = self.byte()?;
            return self.string_tagged(tag, tag_at);
        }
        KEYS.get((index - 1) as usize)
            .map(|k| (*k).to_string())
            .ok_or(ValueError::Reference { index, at })
    }

    fn string_tagged(&mut self, tag: u8, at: usize) -> Result<String, ValueError> {
        match tag {
            STRING => {
                let n = self.length()?;
                let bytes = &self.data[self.pos..self.pos + n];
                let s = std::str::from_utf8(bytes).map_err(|_| ValueError::Utf8(at))?;
                self.pos += n;
                self.seen.push(s.to_string());
                Ok(s.to_string())
            }
            BACKREF => {
                let index = self.varint()?;
                self.seen
                    .get(usize::try_from(index).unwrap_or(usize::MAX))
                    .cloned()
                    .ok_or(ValueError::Reference { index, at })
            }
            VALUE_BASE..SMALL_BASE => {
                let index = u64::from(tag - VALUE_BASE);
                VALUES
                    .get(index as usize)
                    .map(|v| (*v).to_string())
                    .ok_or(ValueError::Reference { index, at })
            }
            _ => Err(ValueError::Tag { tag, at }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_fit_their_tag_ranges() {
        assert!(VALUES.len() <= usize::from(SMALL_BASE - VALUE_BASE));
        // Keys are varints: more than 127 would still work, but cost 2 bytes.
        assert!(KEYS.len() < 128);
        for table in [KEYS, VALUES] {
            let unique: std::collections::BTreeSet<_> = table.iter().collect();
            assert_eq!(unique.len(), table.len());
        }
    }

    #[test]
    fn values_round_trip() {
        let value = serde_json::json!({
            "a": [null, true, false, 0, 63, 64, 1_000_000, -1, -300, 1.5, "x", "x", "running"],
            "version": {"nested": {"deep": u64::MAX}},
            "": i64::MIN,
        });
        let mut enc = Encoder::default();
        enc.value(&value);
        let mut dec = Decoder::new(&enc.out);
        assert_eq!(dec.value(0), Ok(value));
        assert_eq!(dec.remaining(), 0);
    }

    #[test]
    fn bad_bytes_are_errors() {
        assert_eq!(
            Decoder::new(&[ARRAY, 5, NULL]).value(0),
            Err(ValueError::Truncated(1))
        );
        assert!(matches!(
            Decoder::new(&[BACKREF, 0]).value(0),
            Err(ValueError::Reference { .. })
        ));
        assert!(matches!(
            Decoder::new(&[STRING, 1, 0xff]).value(0),
            Err(ValueError::Utf8(0))
        ));
        let deep = vec![ARRAY; 200];
        let mut with_len = Vec::new();
        for _ in &deep {
            with_len.extend_from_slice(&[ARRAY, 1]);
        }
        assert_eq!(Decoder::new(&with_len).value(0), Err(ValueError::Depth));
    }
}
