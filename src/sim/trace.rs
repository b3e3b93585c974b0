//! The trace: a structured account of everything that happened in a run,
//! one entry per thing, and its text form with one fixed-column line per
//! entry ([`trace_text`]), which is what the golden tests compare and what
//! the UI shows in its log.

use super::net::CallId;
use super::queue::{Seconds, Tick, write_digits};
use crate::model::eval::DesiredUpdates;
use crate::server::rpc::Rpc;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use std::rc::Rc;

/// One thing that happened, at a tick, seen from an actor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEntry {
    /// Script step that produced it (0-based index in the action log).
    pub step: usize,
    /// When it happened.
    pub tick: Tick,
    /// What happened.
    pub event: TraceEvent,
}

/// A text of the trace: immutable, so it keeps no spare capacity (the
/// history keeps every entry).
pub type Text = Box<str>;

/// A text of the trace that repeats from entry to entry (a node name, a
/// rejection reason): one `Rc` per distinct text, shared by every entry
/// that holds it ([`SharedTexts`]). One pointer wide (the text sits behind
/// the shared part), so the entries that hold one stay small; it reads,
/// prints, compares and serializes as the text.
#[derive(Clone)]
pub struct SharedText(Rc<SharedTextInner>);

/// The shared part of a [`SharedText`]: the text and its hash in the
/// tables ([`shared_text_hash`]), computed once when the text is made, so
/// that sharing an event's texts with a table's costs no hashing, and
/// whether a table holds this very copy ([`Stored`]).
struct SharedTextInner {
    text: Box<str>,
    hash: u32,
    stored: Stored,
}

/// Whether a table holds this very copy of a shared item (set when one
/// stores it, never cleared): sharing an item that is already a stored
/// copy, as most of an event's texts are (the server takes them from
/// [`SharedTexts::text`]), then costs no lookup. A copy stored by another
/// table (another world's) is left as it is: that changes where a text
/// lives, never what it reads.
#[derive(Debug, Default)]
struct Stored(std::cell::Cell<bool>);

impl Stored {
    fn get(&self) -> bool {
        self.0.get()
    }

    fn set(&self) {
        self.0.set(true);
    }
}

impl SharedText {
    /// A shared text of `text` (hashed once, here).
    fn new(text: Box<str>) -> Self {
        let hash = shared_text_hash(&text);
        SharedText(Rc::new(SharedTextInner {
            text,
            hash,
            stored: Stored::default(),
        }))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0.text
    }

    /// Whether `a` and `b` are the same shared copy.
    pub fn ptr_eq(a: &SharedText, b: &SharedText) -> bool {
        Rc::ptr_eq(&a.0, &b.0)
    }
}

impl Default for SharedText {
    fn default() -> Self {
        SharedText::from("")
    }
}

impl std::ops::Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for SharedText {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        SharedText::new(text.into())
    }
}

impl From<&String> for SharedText {
    fn from(text: &String) -> Self {
        SharedText::from(text.as_str())
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> Self {
        SharedText::new(text.into_boxed_str())
    }
}

impl From<Box<str>> for SharedText {
    fn from(text: Box<str>) -> Self {
        SharedText::new(text)
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &Self) -> bool {
        SharedText::ptr_eq(self, other) || self.as_str() == other.as_str()
    }
}

impl Eq for SharedText {}

impl PartialOrd for SharedText {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedText {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for SharedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for SharedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for SharedText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SharedText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(String::deserialize(deserializer)?.into())
    }
}

/// A node name in the trace (shared, as [`SharedText`]).
pub type NodeName = SharedText;

/// The outcome of a call the leader handled, or of a reply, in words
/// ([`TraceEvent::CallHandled`], [`TraceEvent::Reply`]). Most calls are
/// heartbeats, whose words are a node status and a TTL: those are kept as
/// the numbers and written out when read (the history keeps every entry;
/// at the simulator bench's size a run keeps ~45,000 of them, each a heap
/// block as a text). Reads, prints, compares and serializes as its text;
/// as small as a [`Text`] (one variant beside it: the text's pointer is
/// never null, and that one spare value tells the other).
#[derive(Clone)]
pub enum CallDetail {
    /// Any other outcome.
    Text(Text),
    /// A heartbeat's words.
    Heartbeat {
        /// The TTL told to the client, in ticks.
        ttl: u32,
        /// Which words.
        form: HeartbeatForm,
    },
}

/// The words of a [`CallDetail::Heartbeat`]: a reply's (`ttl=<seconds>`),
/// or the leader's on accepting one (`status=<status> ttl=<seconds>s`,
/// the node's status after it: a known one; another Nomad version's stays
/// a text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeartbeatForm {
    /// The reply.
    Reply,
    /// Accepted, the node `initializing`.
    Initializing,
    /// Accepted, the node `ready`.
    Ready,
    /// Accepted, the node `down`.
    Down,
    /// Accepted, the node `disconnected`.
    Disconnected,
}

impl HeartbeatForm {
    fn accepted(status: &crate::model::NodeStatus) -> Option<Self> {
        use crate::model::NodeStatus as S;
        Some(match status {
            S::Initializing => HeartbeatForm::Initializing,
            S::Ready => HeartbeatForm::Ready,
            S::Down => HeartbeatForm::Down,
            S::Disconnected => HeartbeatForm::Disconnected,
            S::Other(_) => return None,
        })
    }

    /// The node status an accepted heartbeat names.
    fn status(self) -> Option<&'static str> {
        match self {
            HeartbeatForm::Reply => None,
            HeartbeatForm::Initializing => Some("initializing"),
            HeartbeatForm::Ready => Some("ready"),
            HeartbeatForm::Down => Some("down"),
            HeartbeatForm::Disconnected => Some("disconnected"),
        }
    }
}

impl CallDetail {
    /// A heartbeat accepted, the node now `status`, its next TTL `ttl`
    /// (a text when the status is not a known one or the TTL does not fit).
    pub fn heartbeat(status: &crate::model::NodeStatus, ttl: Tick) -> Self {
        match (HeartbeatForm::accepted(status), u32::try_from(ttl)) {
            (Some(form), Ok(ttl)) => CallDetail::Heartbeat { ttl, form },
            _ => {
                let mut text = String::new();
                push_heartbeat(&mut text, Some(status.as_str()), ttl);
                CallDetail::Text(text.into())
            }
        }
    }

    /// A heartbeat's reply with the TTL `ttl`.
    pub fn ttl(ttl: Tick) -> Self {
        match u32::try_from(ttl) {
            Ok(ttl) => CallDetail::Heartbeat {
                ttl,
                form: HeartbeatForm::Reply,
            },
            Err(_) => {
                let mut text = String::new();
                push_heartbeat(&mut text, None, ttl);
                CallDetail::Text(text.into())
            }
        }
    }

    /// Appends the text to `out`.
    pub fn push_to(&self, out: &mut String) {
        match self {
            CallDetail::Text(text) => out.push_str(text),
            CallDetail::Heartbeat { ttl, form } => {
                push_heartbeat(out, form.status(), Tick::from(*ttl));
            }
        }
    }

    /// The text (borrowed for a [`CallDetail::Text`], written out else).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            CallDetail::Text(text) => std::borrow::Cow::Borrowed(text),
            CallDetail::Heartbeat { .. } => {
                let mut out = String::with_capacity(32);
                self.push_to(&mut out);
                std::borrow::Cow::Owned(out)
            }
        }
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        matches!(self, CallDetail::Text(text) if text.is_empty())
    }
}

/// A heartbeat's words: `status=<status> ttl=<seconds>s` when accepted
/// with `status`, else (the reply's) `ttl=<seconds>`.
fn push_heartbeat(out: &mut String, status: Option<&str>, ttl: Tick) {
    match status {
        Some(status) => {
            out.extend(["status=", status, " ttl="]);
            super::queue::push_seconds(out, ttl);
            out.push('s');
        }
        None => {
            out.push_str("ttl=");
            super::queue::push_seconds(out, ttl);
        }
    }
}

impl From<String> for CallDetail {
    fn from(text: String) -> Self {
        CallDetail::Text(text.into())
    }
}

impl From<&str> for CallDetail {
    fn from(text: &str) -> Self {
        CallDetail::Text(text.into())
    }
}

/// Equal when the texts are (a heartbeat read back from JSON is a text).
impl PartialEq for CallDetail {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (CallDetail::Text(a), CallDetail::Text(b)) => a == b,
            (
                CallDetail::Heartbeat { ttl, form },
                CallDetail::Heartbeat {
                    ttl: other_ttl,
                    form: other_form,
                },
            ) => ttl == other_ttl && form == other_form,
            _ => self.text() == other.text(),
        }
    }
}

impl fmt::Display for CallDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.text())
    }
}

/// As the text's (a quoted string).
impl fmt::Debug for CallDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.text(), f)
    }
}

impl Serialize for CallDetail {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text())
    }
}

impl<'de> Deserialize<'de> for CallDetail {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(String::deserialize(deserializer)?.into())
    }
}

/// What happened.
///
/// The history keeps every entry, so the common variants are small (32
/// bytes, an entry 48): texts are [`Text`]s, node names shared
/// [`NodeName`]s, RPC names and broker states one byte ([`RpcName`],
/// [`BrokerState`]), call numbers four, alloc changes three pointers
/// ([`AllocChange`]), and the variants with more texts sit behind a `Box`
/// (they serialize as the same flat objects).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceEvent {
    /// A script action was applied.
    Action {
        /// The action as one line.
        text: Text,
    },
    /// A client sent a call.
    CallSent {
        /// Sender.
        node: NodeName,
        /// Call number.
        call: CallId,
        /// RPC name, e.g. `Node.UpdateStatus`.
        rpc: RpcName,
        /// Short description of the arguments (one pointer wide: most
        /// calls' is one of a few fixed texts, shared).
        detail: SharedText,
        /// Whether the link holds it.
        held: bool,
    },
    /// A call could not be sent or was lost; the client sees an error.
    CallFailed {
        /// Sender.
        node: NodeName,
        /// Call number.
        call: CallId,
        /// RPC name.
        rpc: RpcName,
        /// Why.
        reason: Text,
    },
    /// The user held, released, delayed, reordered or dropped a call.
    CallControl {
        /// Sender.
        node: NodeName,
        /// Call number.
        call: CallId,
        /// What was done.
        what: Text,
    },
    /// The leader handled a call.
    CallHandled {
        /// Sender.
        node: NodeName,
        /// Call number.
        call: CallId,
        /// RPC name.
        rpc: RpcName,
        /// Whether the server accepted it.
        accepted: bool,
        /// Outcome in words (the refusal reason when refused).
        detail: CallDetail,
    },
    /// A reply reached the client.
    Reply {
        /// Receiver.
        node: NodeName,
        /// Call number.
        call: CallId,
        /// RPC name.
        rpc: RpcName,
        /// Outcome in words.
        detail: CallDetail,
    },
    /// The server reset a node's heartbeat timer.
    HeartbeatReset {
        /// Node.
        node: NodeName,
        /// The TTL told to the client, in ticks.
        ttl: Tick,
        /// When the server timer fires.
        deadline: Tick,
    },
    /// A node's heartbeat timer fired.
    HeartbeatMissed(Box<HeartbeatMissed>),
    /// A node changed status.
    NodeStatus(Box<NodeStatusChange>),
    /// A node's drain or eligibility changed.
    NodeFlags {
        /// Node.
        node: NodeName,
        /// What changed.
        detail: Text,
    },
    /// A job was registered, updated or stopped.
    Job {
        /// Job ID.
        job: SharedText,
        /// Version after the change.
        version: u64,
        /// What happened (one pointer wide, like `job`: the entry stays
        /// in 32 bytes).
        detail: SharedText,
    },
    /// An eval was created.
    EvalCreated(Box<EvalCreated>),
    /// An eval changed state in the broker (ready, blocked, unblocked, cancelled).
    EvalState {
        /// Eval ID.
        eval: Text,
        /// New state.
        state: BrokerState,
        /// Why.
        reason: SharedText,
    },
    /// The scheduler processed an eval.
    EvalProcessed(Box<EvalProcessed>),
    /// The plan applier rejected a node's part of a plan.
    PlanRejected {
        /// Node.
        node: NodeName,
        /// Why.
        reason: SharedText,
    },
    /// An allocation changed on the server.
    AllocChanged(AllocChange),
    /// Something happened on a client (alloc runner, watcher, loops).
    Client {
        /// Node.
        node: NodeName,
        /// What happened.
        detail: Text,
    },
    /// A link went up or down, or its hold flag changed.
    Link {
        /// Node.
        node: NodeName,
        /// What changed.
        detail: Text,
    },
    /// An assertion was checked.
    Assertion {
        /// Whether it held.
        ok: bool,
        /// What was checked, and the actual value when it failed.
        detail: Text,
    },
    /// An invariant checker found a violation.
    Violation {
        /// What is wrong.
        detail: Text,
    },
    /// The leader handled an operator's call (a script's deployment action).
    Operator {
        /// RPC name, e.g. `Deployment.Promote` (one pointer wide).
        rpc: SharedText,
        /// Whether the server accepted it.
        accepted: bool,
        /// Outcome in words (Nomad's error text when refused).
        detail: Text,
    },
}

/// [`TraceEvent::HeartbeatMissed`]: a node's heartbeat timer fired.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeartbeatMissed {
    /// Node.
    pub node: NodeName,
    /// The status the heartbeater asks for (shared: one of a few).
    pub requested: SharedText,
    /// Why (which allocs may wait; shared: a node's misses repeat it).
    pub reason: SharedText,
}

/// The state an eval moved to in the broker ([`TraceEvent::EvalState`]),
/// in one byte; it prints, compares and serializes as its name (`ready`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BrokerState {
    /// `ready`: its `WaitUntil` came.
    Ready,
    /// `not-ready`: asked for, but not in the ready set.
    NotReady,
    /// `unblocked`: capacity may have appeared.
    Unblocked,
    /// `canceled`.
    Canceled,
}

impl BrokerState {
    /// Every state, in order.
    const ALL: [BrokerState; 4] = [
        BrokerState::Ready,
        BrokerState::NotReady,
        BrokerState::Unblocked,
        BrokerState::Canceled,
    ];

    /// The name, e.g. `not-ready`.
    pub fn as_str(self) -> &'static str {
        match self {
            BrokerState::Ready => "ready",
            BrokerState::NotReady => "not-ready",
            BrokerState::Unblocked => "unblocked",
            BrokerState::Canceled => "canceled",
        }
    }
}

impl std::ops::Deref for BrokerState {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for BrokerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for BrokerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for BrokerState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for BrokerState {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        BrokerState::ALL
            .into_iter()
            .find(|known| known.as_str() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown eval state {name:?}")))
    }
}

/// [`TraceEvent::NodeStatus`]: a node changed status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeStatusChange {
    /// Node.
    pub node: NodeName,
    /// Old status.
    pub from: Text,
    /// New status.
    pub to: Text,
    /// Why.
    pub reason: Text,
}

/// [`TraceEvent::AllocChanged`]: an allocation changed on the server. The
/// alloc's ID and name sit in one shared text, which the history shares
/// between the entries that name the alloc ([`AllocSubjects`]); it
/// serializes, prints and compares as the flat `{alloc, name, node,
/// detail}` it stands for.
#[derive(Clone)]
pub struct AllocChange {
    /// Alloc ID and name.
    subject: Rc<AllocSubject>,
    /// Node.
    pub node: NodeName,
    /// What changed (shared by the history: the same words recur for
    /// many allocs).
    pub detail: SharedText,
}

impl AllocChange {
    /// The change `detail` of alloc `alloc` named `name` on `node`.
    pub fn new(alloc: &str, name: &str, node: NodeName, detail: SharedText) -> Self {
        AllocChange {
            subject: Rc::new(AllocSubject::new(alloc, name)),
            node,
            detail,
        }
    }

    /// Alloc ID.
    pub fn alloc(&self) -> &str {
        self.subject.alloc()
    }

    /// Alloc name.
    pub fn name(&self) -> &str {
        self.subject.name()
    }

    /// The fields, borrowed.
    fn fields(&self) -> AllocChangeRef<'_> {
        AllocChangeRef {
            alloc: self.alloc(),
            name: self.name(),
            node: &self.node,
            detail: &self.detail,
        }
    }
}

/// [`AllocChange`]'s fields, borrowed: what it serializes as.
#[derive(Debug, PartialEq, Serialize)]
#[serde(rename = "AllocChange")]
struct AllocChangeRef<'a> {
    alloc: &'a str,
    name: &'a str,
    node: &'a str,
    detail: &'a str,
}

/// [`AllocChange`]'s fields, owned: what it deserializes from.
#[derive(Deserialize)]
#[serde(rename = "AllocChange")]
struct AllocChangeFields {
    alloc: String,
    name: String,
    node: NodeName,
    detail: SharedText,
}

impl PartialEq for AllocChange {
    fn eq(&self, other: &Self) -> bool {
        self.fields() == other.fields()
    }
}

impl std::fmt::Debug for AllocChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllocChange")
            .field("alloc", &self.alloc())
            .field("name", &self.name())
            .field("node", &self.node)
            .field("detail", &self.detail)
            .finish()
    }
}

impl Serialize for AllocChange {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.fields().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for AllocChange {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = AllocChangeFields::deserialize(deserializer)?;
        Ok(AllocChange::new(
            &fields.alloc,
            &fields.name,
            fields.node,
            fields.detail,
        ))
    }
}

impl TraceEvent {
    /// A [`TraceEvent::AllocChanged`] about `alloc` (its node's name taken
    /// from `texts`).
    pub fn alloc_changed(
        texts: &mut SharedTexts,
        alloc: &crate::model::Allocation,
        detail: impl Into<SharedText>,
    ) -> Self {
        TraceEvent::AllocChanged(AllocChange {
            subject: texts.subject(&alloc.id, &alloc.name),
            node: texts.text(&alloc.node_id),
            detail: detail.into(),
        })
    }
}

/// [`TraceEvent::EvalCreated`]: an eval was created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalCreated {
    /// Eval ID.
    pub eval: Text,
    /// Job ID.
    pub job: SharedText,
    /// Trigger.
    pub trigger: SharedText,
    /// Node for node-update evals.
    pub node: NodeName,
    /// Delay, if any.
    pub wait_until: Option<Tick>,
    /// Status at creation (pending or blocked).
    pub status: SharedText,
}

/// [`TraceEvent::EvalProcessed`]: the scheduler processed an eval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalProcessed {
    /// Eval ID.
    pub eval: Text,
    /// Job ID.
    pub job: SharedText,
    /// Trigger.
    pub trigger: SharedText,
    /// The reconciler's result per group.
    pub desired_tg_updates: GroupUpdates,
    /// Per alloc: the set the reconciler put it in and why.
    pub reasons: AllocReasons,
    /// The plan in words, one line per node.
    pub plan: PlanLines,
    /// Status after processing.
    pub status: SharedText,
}

/// The plan of a processed eval in words ([`EvalProcessed::plan`]), one
/// line per node. The lines are [`SharedText`]s: an eval that is retried
/// (a plan refused on an initializing node, say) writes the same lines
/// again, and the history keeps one copy of each ([`AllocSubjects`]). It
/// reads as a slice of lines, and prints, compares and serializes as the
/// list of texts it stands for.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PlanLines(Box<[SharedText]>);

impl std::ops::Deref for PlanLines {
    type Target = [SharedText];

    fn deref(&self) -> &[SharedText] {
        &self.0
    }
}

impl std::fmt::Debug for PlanLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl FromIterator<Text> for PlanLines {
    fn from_iter<I: IntoIterator<Item = Text>>(lines: I) -> Self {
        PlanLines(lines.into_iter().map(SharedText::from).collect())
    }
}

impl FromIterator<String> for PlanLines {
    fn from_iter<I: IntoIterator<Item = String>>(lines: I) -> Self {
        PlanLines(lines.into_iter().map(SharedText::from).collect())
    }
}

impl From<Vec<String>> for PlanLines {
    fn from(lines: Vec<String>) -> Self {
        lines.into_iter().collect()
    }
}

/// Lines shared already (the scheduler's): kept as they are.
impl From<Vec<SharedText>> for PlanLines {
    fn from(lines: Vec<SharedText>) -> Self {
        PlanLines(lines.into_boxed_slice())
    }
}

impl<'a> IntoIterator for &'a PlanLines {
    type Item = &'a SharedText;
    type IntoIter = std::slice::Iter<'a, SharedText>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// The name of a client RPC in the trace, in one byte; it prints,
/// compares and serializes as the name (`Node.UpdateStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RpcName {
    /// `Node.Register`.
    NodeRegister,
    /// `Node.UpdateStatus`.
    NodeUpdateStatus,
    /// `Node.UpdateAlloc`.
    NodeUpdateAlloc,
    /// `Node.GetClientAllocs`.
    NodeGetClientAllocs,
    /// `Alloc.GetAlloc`.
    AllocGetAlloc,
}

impl RpcName {
    /// Every name, in order.
    const ALL: [RpcName; 5] = [
        RpcName::NodeRegister,
        RpcName::NodeUpdateStatus,
        RpcName::NodeUpdateAlloc,
        RpcName::NodeGetClientAllocs,
        RpcName::AllocGetAlloc,
    ];

    /// The name of `rpc`.
    pub fn of(rpc: &Rpc) -> RpcName {
        match rpc {
            Rpc::Register { .. } => RpcName::NodeRegister,
            Rpc::UpdateStatus => RpcName::NodeUpdateStatus,
            Rpc::UpdateAlloc { .. } => RpcName::NodeUpdateAlloc,
            Rpc::GetClientAllocs => RpcName::NodeGetClientAllocs,
            Rpc::GetAlloc { .. } => RpcName::AllocGetAlloc,
        }
    }

    /// The name, e.g. `Node.UpdateStatus`.
    pub fn as_str(self) -> &'static str {
        match self {
            RpcName::NodeRegister => "Node.Register",
            RpcName::NodeUpdateStatus => "Node.UpdateStatus",
            RpcName::NodeUpdateAlloc => "Node.UpdateAlloc",
            RpcName::NodeGetClientAllocs => "Node.GetClientAllocs",
            RpcName::AllocGetAlloc => "Alloc.GetAlloc",
        }
    }
}

impl From<&Rpc> for RpcName {
    fn from(rpc: &Rpc) -> RpcName {
        RpcName::of(rpc)
    }
}

impl std::ops::Deref for RpcName {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for RpcName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for RpcName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for RpcName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for RpcName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RpcName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        RpcName::ALL
            .into_iter()
            .find(|known| known.as_str() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown rpc {name:?}")))
    }
}

impl TraceEvent {
    /// Calls `f` on each of the event's texts that repeat between entries:
    /// its node name, its job and trigger, and the states and reasons of
    /// the kinds whose texts come from a few fixed ones.
    fn for_each_shared_text<'a>(&'a mut self, mut f: impl FnMut(&'a mut SharedText)) {
        match self {
            TraceEvent::PlanRejected { node, reason } => {
                f(node);
                f(reason);
            }
            TraceEvent::EvalState { reason, .. } => f(reason),
            TraceEvent::EvalCreated(created) => {
                let EvalCreated {
                    job,
                    trigger,
                    node,
                    status,
                    ..
                } = &mut **created;
                for text in [node, job, trigger, status] {
                    f(text);
                }
            }
            TraceEvent::EvalProcessed(processed) => {
                let EvalProcessed {
                    job,
                    trigger,
                    status,
                    ..
                } = &mut **processed;
                for text in [job, trigger, status] {
                    f(text);
                }
            }
            TraceEvent::CallSent { node, .. }
            | TraceEvent::CallFailed { node, .. }
            | TraceEvent::CallControl { node, .. }
            | TraceEvent::CallHandled { node, .. }
            | TraceEvent::Reply { node, .. }
            | TraceEvent::HeartbeatReset { node, .. }
            | TraceEvent::NodeFlags { node, .. }
            | TraceEvent::Client { node, .. }
            | TraceEvent::Link { node, .. } => f(node),
            TraceEvent::NodeStatus(change) => f(&mut change.node),
            TraceEvent::HeartbeatMissed(missed) => {
                let HeartbeatMissed {
                    node,
                    requested,
                    reason,
                } = &mut **missed;
                for text in [node, requested, reason] {
                    f(text);
                }
            }
            TraceEvent::Job { job, .. } => f(job),
            TraceEvent::AllocChanged(change) => f(&mut change.node),
            TraceEvent::Action { .. }
            | TraceEvent::Assertion { .. }
            | TraceEvent::Violation { .. }
            | TraceEvent::Operator { .. } => {}
        }
    }

    /// The texts [`TraceEvent::for_each_shared_text`] visits, in order.
    #[cfg(test)]
    fn shared_texts_mut(&mut self) -> [Option<&mut SharedText>; 4] {
        let mut texts = [None, None, None, None];
        let mut slots = texts.iter_mut();
        self.for_each_shared_text(|text| {
            if let Some(slot) = slots.next() {
                *slot = Some(text);
            }
        });
        texts
    }
}

/// The repeating texts a run's trace has used (node names, fixed
/// reasons), each once: [`SharedTexts::share`] points an event's
/// [`SharedText`]s at the stored ones, so the history keeps one copy of each
/// instead of one per entry. Clones share the table until one of them meets
/// a new text. It changes nothing but where the texts live.
#[derive(Debug, Clone, Default)]
pub struct SharedTexts {
    table: Rc<TextTable<SharedText>>,
    /// The alloc subjects ([`SharedTexts::subject`]), apart from the texts:
    /// a checkpoint that meets a new alloc copies only this table.
    subjects: Rc<TextTable<Rc<AllocSubject>>>,
    /// The stored copies of the fixed texts used so far
    /// ([`SharedTexts::fixed`]: a few), by the address of the text.
    fixed: Vec<(&'static str, SharedText)>,
}

/// Any two tables compare equal: a table is where texts live, not state
/// (the server that holds one compares by its state).
impl PartialEq for SharedTexts {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The texts of [`SharedTexts`] (and the subjects of [`AllocSubjects`])
/// in an open-addressing table (every event asks it once or more, so a
/// lookup is a hash and, mostly, one compare). The hash is fixed
/// ([`text_hash`]), so the table's layout depends on nothing but the items.
#[derive(Debug, Clone)]
struct TextTable<T> {
    /// A power of two of slots (or none), at most half full (a lookup
    /// then probes at most ~1.5 slots on average to find a stored text
    /// and ~2.5 to miss; every event makes a few).
    slots: Vec<Option<T>>,
    /// Items stored.
    len: usize,
}

impl<T> Default for TextTable<T> {
    fn default() -> Self {
        TextTable {
            slots: Vec::new(),
            len: 0,
        }
    }
}

/// A fixed hash of `bytes` and `seed`, eight bytes at a time (the tables
/// hash every text an event holds: a plan line is ~40 bytes), mixed at the
/// end so that its low bits, which pick a slot, depend on every byte. A
/// tail shorter than eight bytes is read as the last eight bytes of the
/// text (overlapping the word before) or, in a text under eight bytes, as
/// two overlapping halves: no byte copy, and the length, hashed first,
/// tells the overlaps apart.
fn text_hash(bytes: &[u8], seed: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let step = |hash: u64, word: u64| (hash.rotate_left(23) ^ word).wrapping_mul(K);
    let mut hash = step(seed, bytes.len() as u64);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        hash = step(hash, word_at(word, 0));
    }
    let rest = words.remainder().len();
    if rest > 0 {
        let len = bytes.len();
        let word = if len >= 8 {
            word_at(bytes, len - 8)
        } else if len >= 4 {
            u64::from(half_at(bytes, 0)) << 32 | u64::from(half_at(bytes, len - 4))
        } else {
            u64::from(bytes[0]) << 16 | u64::from(bytes[len / 2]) << 8 | u64::from(bytes[len - 1])
        };
        hash = step(hash, word);
    }
    hash ^= hash >> 32;
    hash = hash.wrapping_mul(K);
    hash ^ (hash >> 29)
}

/// The eight bytes of `bytes` at `at` as a little-endian number (zero if
/// there are fewer: callers read inside the text).
fn word_at(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|word| word.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// Whether `a` and `b` hold the same bytes: a text of 4 to 16 bytes (a
/// node name) is compared as two overlapping numbers, with no call.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    match len {
        8..=16 => word_at(a, 0) == word_at(b, 0) && word_at(a, len - 8) == word_at(b, len - 8),
        4..=7 => half_at(a, 0) == half_at(b, 0) && half_at(a, len - 4) == half_at(b, len - 4),
        _ => a == b,
    }
}

/// The four bytes of `bytes` at `at` as a little-endian number (zero if
/// there are fewer).
fn half_at(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|half| half.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// What a [`TextTable`] stores: a shared pointer with a key that says
/// which stored item stands for it.
trait TableItem: Clone {
    /// The key's hash (only the low bits pick a slot).
    fn key_hash(&self) -> usize;
    /// Whether `other` has the same key.
    fn same_key(&self, other: &Self) -> bool;
    /// Whether `other` is this very item.
    fn same_item(&self, other: &Self) -> bool;
    /// Whether a table stores this very item.
    fn stored(&self) -> &Stored;
}

/// The table's hash of a shared text's key, the text itself (one function
/// for storing and for looking a `&str` up, so the two always agree).
fn shared_text_hash(text: &str) -> u32 {
    // The low bits pick a slot: 32 of them are plenty (and keep the
    // shared part in 24 bytes with its flag).
    text_hash(text.as_bytes(), 0) as u32
}

impl TableItem for SharedText {
    fn key_hash(&self) -> usize {
        self.0.hash as usize
    }

    fn stored(&self) -> &Stored {
        &self.0.stored
    }

    fn same_key(&self, other: &Self) -> bool {
        // Texts of different hashes differ: a probe past another text
        // reads no bytes of either.
        SharedText::ptr_eq(self, other)
            || (self.0.hash == other.0.hash
                && same_bytes(self.as_str().as_bytes(), other.as_str().as_bytes()))
    }

    fn same_item(&self, other: &Self) -> bool {
        SharedText::ptr_eq(self, other)
    }
}

impl<T: TableItem> TextTable<T> {
    /// The slot that holds `item`'s key, or the empty one it would go to
    /// (the table has an empty slot).
    fn slot(&self, item: &T) -> usize {
        self.slot_by(item.key_hash(), |stored| stored.same_key(item))
    }

    /// The slot of the stored item with key hash `hash` for which `same`
    /// holds, or the empty one such an item would go to.
    fn slot_by(&self, hash: usize, same: impl Fn(&T) -> bool) -> usize {
        let mask = self.slots.len() - 1;
        let mut index = hash & mask;
        while let Some(stored) = &self.slots[index] {
            if same(stored) {
                break;
            }
            index = (index + 1) & mask;
        }
        index
    }

    /// The stored item with `item`'s key, if any.
    fn get(&self, item: &T) -> Option<&T> {
        if self.slots.is_empty() {
            return None;
        }
        self.slots[self.slot(item)].as_ref()
    }

    /// Stores `item` (its key not stored yet).
    fn insert(&mut self, item: T) {
        item.stored().set();
        if (self.len + 1) * 2 > self.slots.len() {
            let size = (self.slots.len() * 2).max(64);
            let old = std::mem::replace(&mut self.slots, vec![None; size]);
            for stored in old.into_iter().flatten() {
                let index = self.slot(&stored);
                self.slots[index] = Some(stored);
            }
        }
        let index = self.slot(&item);
        self.slots[index] = Some(item);
        self.len += 1;
    }

    /// Points `item` at the stored item with its key, storing it if it is
    /// the first (an item a table stores already is left as it is).
    fn share(&mut self, item: &mut T) {
        if item.stored().get() {
            return;
        }
        if self.slots.is_empty() {
            self.insert(item.clone());
            return;
        }
        let index = self.slot(item);
        match &self.slots[index] {
            Some(stored) => {
                if !stored.same_item(item) {
                    *item = stored.clone();
                }
            }
            // A new item goes to the empty slot found (hashed and probed
            // once) unless the table must grow first.
            None if (self.len + 1) * 2 <= self.slots.len() => {
                item.stored().set();
                self.slots[index] = Some(item.clone());
                self.len += 1;
            }
            None => self.insert(item.clone()),
        }
    }
}

impl TextTable<SharedText> {
    /// The stored text equal to `text`, if any.
    fn get_str(&self, text: &str) -> Option<&SharedText> {
        if self.slots.is_empty() {
            return None;
        }
        let hash = shared_text_hash(text);
        let slot = self.slot_by(hash as usize, |stored| {
            stored.0.hash == hash && same_bytes(stored.as_str().as_bytes(), text.as_bytes())
        });
        self.slots[slot].as_ref()
    }
}

impl SharedTexts {
    /// The shared copy of `text`, stored first if it is new: the server and
    /// the simulator build their events' repeating texts (node names, fixed
    /// reasons) with it, so an event holds the stored copy from the start
    /// instead of a new one that [`SharedTexts::share`] would drop.
    pub fn text(&mut self, text: &str) -> SharedText {
        match self.table.get_str(text) {
            Some(shared) => shared.clone(),
            None => self.insert_new(text),
        }
    }

    /// [`SharedTexts::text`] of one of a few fixed texts (a plan
    /// refusal's reason), found by its address without hashing.
    pub fn fixed(&mut self, text: &'static str) -> SharedText {
        if let Some((_, shared)) = self
            .fixed
            .iter()
            .find(|(fixed, _)| std::ptr::eq(*fixed, text))
        {
            return shared.clone();
        }
        let shared = self.text(text);
        self.fixed.push((text, shared.clone()));
        shared
    }

    /// The shared subject of alloc `alloc` named `name`, stored first if it
    /// is new: an alloc change is made with the stored copy, which the
    /// history keeps as it is ([`AllocSubjects`] skips stored items),
    /// instead of a new one (two allocations) that it would drop.
    fn subject(&mut self, alloc: &str, name: &str) -> Rc<AllocSubject> {
        if !self.subjects.slots.is_empty() {
            let hash = subject_hash(alloc, name);
            let slot = self.subjects.slot_by(hash as usize, |stored| {
                stored.hash == hash && stored.is(alloc, name)
            });
            if let Some(stored) = &self.subjects.slots[slot] {
                return Rc::clone(stored);
            }
        }
        self.insert_subject(alloc, name)
    }

    /// [`SharedTexts::subject`] of a subject not stored yet.
    #[inline(never)]
    fn insert_subject(&mut self, alloc: &str, name: &str) -> Rc<AllocSubject> {
        let subject = Rc::new(AllocSubject::new(alloc, name));
        Rc::make_mut(&mut self.subjects).insert(Rc::clone(&subject));
        subject
    }

    /// [`SharedTexts::text`] of a text not stored yet (apart: a run meets
    /// few new texts, and the lookup then keeps a light frame).
    #[cold]
    #[inline(never)]
    fn insert_new(&mut self, text: &str) -> SharedText {
        let shared = SharedText::from(text);
        Rc::make_mut(&mut self.table).insert(shared.clone());
        shared
    }

    /// Makes `event`'s repeating texts the shared copies (those a table
    /// stores already, as [`SharedTexts::text`] gives them, are left as
    /// they are).
    pub fn share(&mut self, event: &mut TraceEvent) {
        event.for_each_shared_text(|text| {
            if text.stored().get() {
                return;
            }
            match self.table.get(text) {
                Some(shared) => *text = shared.clone(),
                None => Rc::make_mut(&mut self.table).insert(text.clone()),
            }
        });
    }
}

/// The `DesiredTGUpdates` of one eval: per group, its counters, sorted by
/// group name. A plan has one entry per group (usually one), so a sorted
/// list holds it in a few dozen bytes where a `BTreeMap` node took over a
/// kilobyte (the history keeps one per processed eval). Clones share the
/// list: the eval's outcome in the state store and its `EvalProcessed`
/// trace entry hold one copy. It serializes, prints and iterates as the
/// `BTreeMap<String, DesiredUpdates>` it stands for.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct GroupUpdates {
    /// (group, counters), sorted by group, groups unique; `None` when there
    /// are none. Behind a thin pointer: the trace entry stays small.
    #[allow(clippy::rc_buffer)]
    groups: Option<Rc<Vec<(String, DesiredUpdates)>>>,
}

impl GroupUpdates {
    /// No groups.
    pub fn new() -> Self {
        Self::default()
    }

    /// The (group, counters) list.
    fn groups(&self) -> &[(String, DesiredUpdates)] {
        self.groups.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.groups().len()
    }

    /// Whether there are no groups.
    pub fn is_empty(&self) -> bool {
        self.groups().is_empty()
    }

    /// The counters of `group`.
    pub fn get(&self, group: &str) -> Option<&DesiredUpdates> {
        let groups = self.groups();
        groups
            .binary_search_by(|(name, _)| name.as_str().cmp(group))
            .ok()
            .map(|index| &groups[index].1)
    }

    /// (group, counters) in group order.
    pub fn iter(&self) -> GroupUpdatesIter<'_> {
        self.groups().iter().map(group_pair)
    }

    /// The same counters as a `BTreeMap`.
    pub fn to_map(&self) -> BTreeMap<String, DesiredUpdates> {
        self.groups().iter().cloned().collect()
    }
}

/// A group's entry as a pair of references.
fn group_pair(entry: &(String, DesiredUpdates)) -> (&String, &DesiredUpdates) {
    (&entry.0, &entry.1)
}

/// The iterator of [`GroupUpdates`].
pub type GroupUpdatesIter<'a> = std::iter::Map<
    std::slice::Iter<'a, (String, DesiredUpdates)>,
    fn(&'a (String, DesiredUpdates)) -> (&'a String, &'a DesiredUpdates),
>;

impl<'a> IntoIterator for &'a GroupUpdates {
    type Item = (&'a String, &'a DesiredUpdates);
    type IntoIter = GroupUpdatesIter<'a>;

    fn into_iter(self) -> GroupUpdatesIter<'a> {
        self.iter()
    }
}

impl GroupUpdates {
    /// The groups of `groups`, sorted by group and distinct.
    fn from_sorted(groups: Vec<(String, DesiredUpdates)>) -> Self {
        GroupUpdates {
            groups: (!groups.is_empty()).then(|| Rc::new(groups)),
        }
    }
}

impl FromIterator<(String, DesiredUpdates)> for GroupUpdates {
    fn from_iter<I: IntoIterator<Item = (String, DesiredUpdates)>>(groups: I) -> Self {
        let groups: Vec<(String, DesiredUpdates)> = groups.into_iter().collect();
        // A map's entries (what the scheduler collects) come sorted and
        // distinct: kept as they are.
        if groups.windows(2).all(|pair| pair[0].0 < pair[1].0) {
            return GroupUpdates::from_sorted(groups);
        }
        // Sorted, the last value of a repeated group winning, as a BTreeMap
        // (built by inserting: no sort copy for this element type).
        crate::cold_sort::map_from(groups).into()
    }
}

impl From<BTreeMap<String, DesiredUpdates>> for GroupUpdates {
    fn from(map: BTreeMap<String, DesiredUpdates>) -> Self {
        GroupUpdates::from_sorted(map.into_iter().collect())
    }
}

impl std::ops::Index<&str> for GroupUpdates {
    type Output = DesiredUpdates;

    fn index(&self, group: &str) -> &DesiredUpdates {
        self.get(group).expect("no such group")
    }
}

impl std::fmt::Debug for GroupUpdates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for GroupUpdates {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for GroupUpdates {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(BTreeMap::<String, DesiredUpdates>::deserialize(deserializer)?.into())
    }
}

/// One alloc's set in a reconciler run, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocReason {
    /// Alloc ID.
    pub alloc: String,
    /// Alloc name.
    pub name: String,
    /// Set or decision (untainted, lost, disconnecting, stop, ...).
    pub set: String,
    /// Why, in words.
    pub reason: String,
}

/// One of [`AllocReasons`], borrowed from the packed texts: it prints,
/// compares and serializes as the [`AllocReason`] it stands for, without
/// rebuilding four `String`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename = "AllocReason")]
pub struct AllocReasonRef<'a> {
    /// Alloc ID.
    pub alloc: &'a str,
    /// Alloc name.
    pub name: &'a str,
    /// Set or decision.
    pub set: &'a str,
    /// Why, in words.
    pub reason: &'a str,
}

impl AllocReasonRef<'_> {
    /// The owned reason.
    pub fn to_owned(self) -> AllocReason {
        AllocReason {
            alloc: self.alloc.to_string(),
            name: self.name.to_string(),
            set: self.set.to_string(),
            reason: self.reason.to_string(),
        }
    }
}

/// The reasons of one processed eval ([`AllocReason`]s), packed: each
/// reason is two shared pointers, one to its alloc's ID and name and one
/// to its set and reason texts ([`AllocSubjects`] makes the history keep
/// one copy of each alloc, however many evals list it, and of each (set,
/// reason) pair: a run uses a few dozen). The history keeps one per
/// processed eval, a reason per alloc the reconciler did not simply keep.
/// It serializes, prints and compares as the `Vec<AllocReason>` it stands
/// for; [`AllocReasons::iter`] yields borrowed [`AllocReasonRef`]s.
#[derive(Clone, Default)]
pub struct AllocReasons {
    /// The reasons in order (no allocation when there are none).
    items: Box<[PackedReason]>,
}

/// One reason of [`AllocReasons`].
#[derive(Clone)]
struct PackedReason {
    /// The alloc's ID and name.
    subject: Rc<AllocSubject>,
    /// The set's text and then the reason's, in the same two-part form.
    why: Rc<AllocSubject>,
}

/// The alloc an entry or a reason is about: its ID and then its name, in
/// one text. A reason's set and reason texts take the same form.
#[derive(Debug)]
struct AllocSubject {
    /// The ID followed by the name.
    text: Box<str>,
    /// Where the name starts (an ID is far shorter than 4 GB; 32 bits keep
    /// the subject in 32 bytes with its hash and flag).
    split: u32,
    /// [`subject_hash`] of the two parts (a table grows and probes
    /// without hashing the text again).
    hash: u32,
    /// Whether a table holds this very copy.
    stored: Stored,
}

impl AllocSubject {
    fn new(alloc: &str, name: &str) -> Self {
        let mut text = String::with_capacity(alloc.len() + name.len());
        text.push_str(alloc);
        text.push_str(name);
        AllocSubject {
            text: text.into_boxed_str(),
            split: u32::try_from(alloc.len()).unwrap_or(u32::MAX),
            hash: subject_hash(alloc, name),
            stored: Stored::default(),
        }
    }

    /// The alloc ID.
    fn alloc(&self) -> &str {
        self.text.get(..self.split as usize).unwrap_or(&self.text)
    }

    /// The alloc name.
    fn name(&self) -> &str {
        self.text.get(self.split as usize..).unwrap_or_default()
    }

    /// Whether it holds `first` then `second`.
    fn is(&self, first: &str, second: &str) -> bool {
        self.split as usize == first.len()
            && self.text.len() == first.len() + second.len()
            && self.alloc() == first
            && self.name() == second
    }
}

/// The table's hash of a subject's key, its two parts (one function for
/// storing and for looking the two parts up, so the two always agree).
fn subject_hash(first: &str, second: &str) -> u32 {
    // The low bits pick a slot: 32 of them are plenty.
    text_hash(second.as_bytes(), text_hash(first.as_bytes(), 0)) as u32
}

impl TableItem for Rc<AllocSubject> {
    fn key_hash(&self) -> usize {
        self.hash as usize
    }

    fn same_key(&self, other: &Self) -> bool {
        Rc::ptr_eq(self, other)
            || (self.hash == other.hash && self.split == other.split && self.text == other.text)
    }

    fn same_item(&self, other: &Self) -> bool {
        Rc::ptr_eq(self, other)
    }

    fn stored(&self) -> &Stored {
        &self.stored
    }
}

/// The allocs that the entries a history keeps are about, each once:
/// [`AllocSubjects::share`] points an alloc change and the reasons of a
/// processed eval at the stored subjects, so the history keeps one ID and
/// name per alloc instead of one per entry and reason (an alloc that stays
/// disconnected is listed by every eval of its job). It does the same for
/// the texts about allocs that recur too often to copy and vary too much
/// for the world's [`SharedTexts`] (whose table every checkpoint may copy):
/// the words of alloc changes and the lines of plans. It changes nothing
/// but where the texts live. The history ([`super::history::Session`])
/// keeps one; the world does not (runs without a history, like explore's,
/// do not pay for it).
#[derive(Debug, Clone, Default)]
pub struct AllocSubjects {
    table: TextTable<Rc<AllocSubject>>,
    /// The (set, reason) pairs of reasons.
    whys: TextTable<Rc<AllocSubject>>,
    /// Alloc change words and plan lines.
    texts: TextTable<SharedText>,
}

impl AllocSubjects {
    /// Makes the subjects of `event` (an alloc change's, or its reasons')
    /// the shared copies.
    #[inline]
    pub fn share(&mut self, event: &mut TraceEvent) {
        // Most events name no alloc: they cost a compare here.
        match event {
            TraceEvent::AllocChanged(change) => self.share_change(change),
            TraceEvent::EvalProcessed(processed) => self.share_processed(processed),
            _ => {}
        }
    }

    /// [`AllocSubjects::share`] of an alloc change.
    fn share_change(&mut self, change: &mut AllocChange) {
        self.table.share(&mut change.subject);
        self.texts.share(&mut change.detail);
    }

    /// [`AllocSubjects::share`] of a processed eval.
    fn share_processed(&mut self, processed: &mut EvalProcessed) {
        // Reasons in a row mostly hold one (set, reason) copy (the builder
        // reuses them): the stored copy found for the last one is reused
        // with no lookup.
        let mut last_why: Option<(Rc<AllocSubject>, Rc<AllocSubject>)> = None;
        for item in processed.reasons.items.iter_mut() {
            self.table.share(&mut item.subject);
            match &last_why {
                Some((made, stored)) if Rc::ptr_eq(made, &item.why) => {
                    item.why = Rc::clone(stored);
                }
                _ => {
                    let made = Rc::clone(&item.why);
                    self.whys.share(&mut item.why);
                    last_why = Some((made, Rc::clone(&item.why)));
                }
            }
        }
        for line in processed.plan.0.iter_mut() {
            self.texts.share(line);
        }
    }

    /// Number of distinct subjects stored (not counting the texts).
    pub fn len(&self) -> usize {
        self.table.len
    }

    /// Whether none are stored.
    pub fn is_empty(&self) -> bool {
        self.table.len == 0
    }
}

/// (set, reason) pairs of an eval that a later reason of it may reuse:
/// how many of the latest distinct ones are looked at.
const REUSE_WINDOW: usize = 16;

impl AllocReasons {
    /// No reasons.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of reasons.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The reason at `index`, borrowed.
    pub fn get(&self, index: usize) -> Option<AllocReasonRef<'_>> {
        let item = self.items.get(index)?;
        Some(AllocReasonRef {
            alloc: item.subject.alloc(),
            name: item.subject.name(),
            set: item.why.alloc(),
            reason: item.why.name(),
        })
    }

    /// The reasons in order, borrowed.
    pub fn iter(&self) -> AllocReasonsIter<'_> {
        AllocReasonsIter {
            reasons: self,
            next: 0,
        }
    }

    /// The same reasons as a list.
    pub fn to_vec(&self) -> Vec<AllocReason> {
        self.iter().map(AllocReasonRef::to_owned).collect()
    }
}

/// The iterator of [`AllocReasons`]: borrowed reasons, in order.
#[derive(Clone)]
pub struct AllocReasonsIter<'a> {
    reasons: &'a AllocReasons,
    next: usize,
}

impl<'a> Iterator for AllocReasonsIter<'a> {
    type Item = AllocReasonRef<'a>;

    fn next(&mut self) -> Option<AllocReasonRef<'a>> {
        let reason = self.reasons.get(self.next)?;
        self.next += 1;
        Some(reason)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.reasons.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for AllocReasonsIter<'_> {}

impl<'a> IntoIterator for &'a AllocReasons {
    type Item = AllocReasonRef<'a>;
    type IntoIter = AllocReasonsIter<'a>;

    fn into_iter(self) -> AllocReasonsIter<'a> {
        self.iter()
    }
}

/// Builds [`AllocReasons`] from borrowed texts, one reason at a time (the
/// scheduler packs its reasons as it makes them, with no [`AllocReason`]
/// in between).
#[derive(Default)]
pub struct AllocReasonsBuilder {
    /// The latest [`REUSE_WINDOW`] distinct (set, reason) pairs made so
    /// far, in a ring (the reasons of one eval mostly repeat a few; kept
    /// in place: a builder per processed eval costs no list of them).
    whys: [Option<Rc<AllocSubject>>; REUSE_WINDOW],
    /// Distinct pairs made so far (the latest went to slot `(made - 1) %
    /// REUSE_WINDOW`).
    made: usize,
    items: Vec<PackedReason>,
}

impl AllocReasonsBuilder {
    /// A builder for about `n` reasons.
    pub fn with_capacity(n: usize) -> Self {
        AllocReasonsBuilder {
            items: Vec::with_capacity(n),
            ..Self::default()
        }
    }

    /// Adds a reason (its alloc's subject the stored copy in `texts`: the
    /// history keeps it as it is, where a new one would cost two
    /// allocations that the history would drop).
    pub fn push(
        &mut self,
        texts: &mut SharedTexts,
        alloc: &str,
        name: &str,
        set: &str,
        reason: &str,
    ) {
        self.push_subject(texts.subject(alloc, name), set, reason);
    }

    /// Adds a reason about `subject`.
    fn push_subject(&mut self, subject: Rc<AllocSubject>, set: &str, reason: &str) {
        // The pairs made, latest first (only the filled slots).
        let mut reused = None;
        for back in 1..=self.made.min(REUSE_WINDOW) {
            if let Some(why) = &self.whys[(self.made - back) % REUSE_WINDOW]
                && why.is(set, reason)
            {
                reused = Some(Rc::clone(why));
                break;
            }
        }
        let why = reused.unwrap_or_else(|| {
            let why = Rc::new(AllocSubject::new(set, reason));
            self.whys[self.made % REUSE_WINDOW] = Some(Rc::clone(&why));
            self.made += 1;
            why
        });
        self.items.push(PackedReason { subject, why });
    }

    /// The reasons added, in order.
    pub fn finish(self) -> AllocReasons {
        AllocReasons {
            items: self.items.into_boxed_slice(),
        }
    }
}

impl<'a> FromIterator<&'a AllocReason> for AllocReasons {
    fn from_iter<I: IntoIterator<Item = &'a AllocReason>>(reasons: I) -> Self {
        let reasons = reasons.into_iter();
        let mut builder = AllocReasonsBuilder::with_capacity(reasons.size_hint().0);
        for reason in reasons {
            // Subjects of their own, that the history shares (as it reads
            // a trace back, say).
            let subject = Rc::new(AllocSubject::new(&reason.alloc, &reason.name));
            builder.push_subject(subject, &reason.set, &reason.reason);
        }
        builder.finish()
    }
}

impl FromIterator<AllocReason> for AllocReasons {
    fn from_iter<I: IntoIterator<Item = AllocReason>>(reasons: I) -> Self {
        let reasons: Vec<AllocReason> = reasons.into_iter().collect();
        reasons.iter().collect()
    }
}

impl From<Vec<AllocReason>> for AllocReasons {
    fn from(reasons: Vec<AllocReason>) -> Self {
        reasons.iter().collect()
    }
}

impl PartialEq for AllocReasons {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for AllocReasons {}

impl std::fmt::Debug for AllocReasons {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.to_vec()).finish()
    }
}

impl Serialize for AllocReasons {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for AllocReasons {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Vec::<AllocReason>::deserialize(deserializer)?.into())
    }
}

/// The first 8 characters of an ID, as Nomad's UI shows them.
pub fn short(id: &str) -> &str {
    // IDs are ASCII: the first 8 bytes are then the first 8 characters.
    if let Some(head) = id.as_bytes().get(..8)
        && head.is_ascii()
    {
        return &id[..8];
    }
    let end = id
        .char_indices()
        .nth(8)
        .map_or(id.len(), |(index, _)| index);
    &id[..end]
}

/// Appends `n` right-aligned in `width` columns (wider when it has more
/// digits), as `{n:>width$}` does, without the formatting machinery (a
/// trace line writes a few numbers).
pub(crate) fn push_number(out: &mut String, n: u64, width: usize) {
    let mut digits = [b' '; 20];
    let start = write_digits(&mut digits, n).min(digits.len().saturating_sub(width));
    // ASCII digits and spaces only.
    out.push_str(std::str::from_utf8(&digits[start..]).unwrap_or_default());
}

/// Appends a call as the trace and the sequence diagram name it: `#3 Node.UpdateStatus`.
pub(crate) fn push_call(out: &mut String, call: CallId, rpc: &str) {
    out.push('#');
    push_number(out, call.into(), 0);
    out.push(' ');
    out.push_str(rpc);
}

/// Appends a tick as seconds with three decimals (`12.500`), the seconds
/// right-aligned in `width` columns.
pub(crate) fn push_seconds(out: &mut String, tick: Tick, width: usize) {
    let seconds = Seconds::of(tick);
    let text = seconds.as_str();
    // The text ends in the four of `.mmm`.
    for _ in text.len()..width + 4 {
        out.push(' ');
    }
    out.push_str(text);
}

impl TraceEntry {
    /// The entry as one fixed-column line: tick, actor, kind, detail.
    pub fn line(&self) -> String {
        let mut line = String::new();
        self.write_line(&mut line);
        line
    }

    /// Appends [`TraceEntry::line`] to `out` (no newline): a caller that
    /// writes many lines reuses one buffer.
    pub fn write_line(&self, out: &mut String) {
        let start = out.len();
        push_number(out, self.step as u64, 4);
        out.push(' ');
        // The tick's column is 10 wide and its last 4 are `.mmm`: its seconds are 6 wide.
        push_seconds(out, self.tick, 6);
        out.push(' ');
        let columns = out.len();
        // The detail first, straight into the line: it tells the actor and
        // kind, whose padded columns then go in before it.
        let (actor, kind) = self.event.write_detail(out);
        for (text, width) in [(kind, 18_usize), (actor, 14)] {
            let pad = width.saturating_sub(text.chars().count());
            out.insert_str(columns, &SPACES[..=pad]);
            out.insert_str(columns, text);
        }
        out.truncate(start + out[start..].trim_end().len());
    }
}

/// Spaces to pad the actor's and the kind's columns with (and one more).
const SPACES: &str = "                   ";

impl TraceEvent {
    /// (actor, kind, detail) columns of the text form.
    pub fn columns(&self) -> (String, &'static str, String) {
        let mut detail = String::new();
        let (actor, kind) = self.write_detail(&mut detail);
        (actor.to_string(), kind, detail)
    }

    /// Appends the detail column of the text form to `out`, and returns
    /// the actor and kind columns.
    fn write_detail(&self, out: &mut String) -> (&str, &'static str) {
        match self {
            TraceEvent::Action { text } => {
                out.push_str(text);
                ("user", "action")
            }
            TraceEvent::CallSent {
                node,
                call,
                rpc,
                detail,
                held,
            } => {
                push_call(out, *call, rpc);
                push_after(out, " ", detail);
                if *held {
                    out.push_str(" [held]");
                }
                (node, "call-sent")
            }
            TraceEvent::CallFailed {
                node,
                call,
                rpc,
                reason,
            } => {
                push_call(out, *call, rpc);
                out.extend([": ", reason]);
                (node, "call-failed")
            }
            TraceEvent::CallControl { node, call, what } => {
                let _ = write!(out, "{node} #{call} {what}");
                ("net", "call-control")
            }
            TraceEvent::CallHandled {
                node,
                call,
                rpc,
                accepted,
                detail,
            } => {
                push_call(out, *call, rpc);
                out.extend([" from ", node]);
                push_detail(out, detail);
                ("server", call_outcome(*accepted))
            }
            TraceEvent::Reply {
                node,
                call,
                rpc,
                detail,
            } => {
                push_call(out, *call, rpc);
                push_detail(out, detail);
                (node, "reply")
            }
            TraceEvent::HeartbeatReset {
                node,
                ttl,
                deadline,
            } => {
                out.extend([&**node, " ttl="]);
                push_seconds(out, *ttl, 0);
                out.push_str(" expires@");
                push_seconds(out, *deadline, 0);
                ("server", "ttl-reset")
            }
            TraceEvent::HeartbeatMissed(missed) => {
                let HeartbeatMissed {
                    node,
                    requested,
                    reason,
                } = &**missed;
                let _ = write!(out, "{node} -> {requested} ({reason})");
                ("server", "heartbeat-missed")
            }
            TraceEvent::NodeStatus(change) => {
                let NodeStatusChange {
                    node,
                    from,
                    to,
                    reason,
                } = &**change;
                let _ = write!(out, "{node} {from} -> {to}");
                if !reason.is_empty() {
                    let _ = write!(out, " ({reason})");
                }
                ("server", "node-status")
            }
            TraceEvent::NodeFlags { node, detail } => {
                let _ = write!(out, "{node} {detail}");
                ("server", "node-flags")
            }
            TraceEvent::Job {
                job,
                version,
                detail,
            } => {
                let _ = write!(out, "{job} v{version} {detail}");
                ("server", "job")
            }
            TraceEvent::EvalCreated(created) => {
                let EvalCreated {
                    eval,
                    job,
                    trigger,
                    node,
                    wait_until,
                    status,
                } = &**created;
                let _ = write!(out, "{} {trigger} job={job}", short(eval));
                push_after(out, " node=", node);
                if let Some(wait) = wait_until {
                    out.push_str(" wait_until=");
                    push_seconds(out, *wait, 0);
                }
                if &**status != "pending" {
                    let _ = write!(out, " [{status}]");
                }
                ("broker", "eval-created")
            }
            TraceEvent::EvalState {
                eval,
                state,
                reason,
            } => {
                let _ = write!(out, "{} {state}", short(eval));
                if !reason.is_empty() {
                    let _ = write!(out, " ({reason})");
                }
                ("broker", "eval-state")
            }
            TraceEvent::EvalProcessed(processed) => {
                let EvalProcessed {
                    eval,
                    job,
                    trigger,
                    desired_tg_updates,
                    reasons,
                    plan,
                    status,
                } = &**processed;
                let _ = write!(out, "{} {trigger} job={job} -> {status}", short(eval));
                for (group, updates) in desired_tg_updates {
                    let _ = write!(out, " {group}{{{}}}", fmt_updates(updates));
                }
                for reason in reasons {
                    let _ = write!(
                        out,
                        " | {}({}) {}",
                        reason.name,
                        short(reason.alloc),
                        reason.set
                    );
                }
                for item in plan.iter() {
                    let _ = write!(out, " | plan: {item}");
                }
                ("sched", "eval-processed")
            }
            TraceEvent::PlanRejected { node, reason } => {
                let _ = write!(out, "{node}: {reason}");
                ("server", "plan-rejected")
            }
            TraceEvent::AllocChanged(change) => {
                let _ = write!(
                    out,
                    "{} {} on {}: {}",
                    change.name(),
                    short(change.alloc()),
                    change.node,
                    change.detail
                );
                ("server", "alloc")
            }
            TraceEvent::Client { node, detail } => {
                out.push_str(detail);
                (node, "client")
            }
            TraceEvent::Link { node, detail } => {
                let _ = write!(out, "{node} {detail}");
                ("net", "link")
            }
            TraceEvent::Assertion { ok, detail } => {
                out.push_str(detail);
                ("check", if *ok { "assert-ok" } else { "assert-FAILED" })
            }
            TraceEvent::Violation { detail } => {
                out.push_str(detail);
                ("check", "INVARIANT")
            }
            TraceEvent::Operator {
                rpc,
                accepted,
                detail,
            } => {
                let _ = write!(out, "{rpc} from operator");
                push_after(out, ": ", detail);
                ("server", call_outcome(*accepted))
            }
        }
    }
}

/// The trace kind of a handled call: a client's or the operator's.
fn call_outcome(accepted: bool) -> &'static str {
    if accepted {
        "call-accepted"
    } else {
        "call-refused"
    }
}

/// Non-zero counters of a group's `DesiredTGUpdates`, e.g. `place=1 stop=1`.
pub fn fmt_updates(updates: &DesiredUpdates) -> String {
    let pairs = [
        ("ignore", updates.ignore),
        ("place", updates.place),
        ("migrate", updates.migrate),
        ("stop", updates.stop),
        ("inplace", updates.in_place_update),
        ("destructive", updates.destructive_update),
        ("canary", updates.canary),
        ("preempt", updates.preemptions),
        ("disconnect", updates.disconnect),
        ("reconnect", updates.reconnect),
        ("resched_now", updates.reschedule_now),
        ("resched_later", updates.reschedule_later),
    ];
    let parts: Vec<String> = pairs
        .iter()
        .filter(|(_, count)| *count > 0)
        .map(|(name, count)| format!("{name}={count}"))
        .collect();
    parts.join(" ")
}

/// Appends `text` after `before`, unless `text` is empty.
/// `": "` and a call's outcome, when there is one.
fn push_detail(out: &mut String, detail: &CallDetail) {
    if !detail.is_empty() {
        out.push_str(": ");
        detail.push_to(out);
    }
}

fn push_after(out: &mut String, before: &str, text: &str) {
    if !text.is_empty() {
        out.push_str(before);
        out.push_str(text);
    }
}

/// The text trace: one fixed-column line per entry, each ending in `\n`.
///
/// Columns: step, tick in seconds, actor, kind, detail. This is the form the
/// golden tests snapshot and the UI's log shows; it depends on nothing but
/// the entries, so native and WebAssembly builds print the same bytes.
pub fn trace_text(entries: &[TraceEntry]) -> String {
    let mut text = String::new();
    for entry in entries {
        entry.write_line(&mut text);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{
        AllocChange, AllocReason, AllocReasons, AllocReasonsBuilder, AllocSubjects, BrokerState,
        CallDetail, EvalCreated, EvalProcessed, GroupUpdates, HeartbeatForm, PlanLines, RpcName,
        SharedText, SharedTexts, Text, TraceEntry, TraceEvent,
    };
    use std::rc::Rc;

    #[test]
    fn numbers_and_seconds_are_written_as_format_writes_them() {
        for n in [0, 7, 42, 999, 1000, 12_345, 9_999_999, u64::MAX] {
            for width in [0, 4, 6] {
                let mut out = String::from("x");
                super::push_number(&mut out, n, width);
                assert_eq!(out, format!("x{n:>width$}"));
                let mut out = String::new();
                super::push_seconds(&mut out, n, width);
                assert_eq!(out, format!("{:>width$}.{:03}", n / 1000, n % 1000));
            }
        }
    }

    fn reason(alloc: &str, name: &str, set: &str, why: &str) -> AllocReason {
        AllocReason {
            alloc: alloc.into(),
            name: name.into(),
            set: set.into(),
            reason: why.into(),
        }
    }

    /// Packed reasons give back what went in, in order, and serialize,
    /// print and compare as the list they stand for.
    #[test]
    fn packed_reasons_read_back_as_the_list() {
        let list = vec![
            reason("a1-uuid", "web.web[0]", "lost -> stop", "node down"),
            reason("a2-uuid", "web.web[1]", "lost -> stop", "node down"),
            reason("", "", "", ""),
            reason("a3-uuid", "web.web[2]", "untainted -> migrate", "node down"),
        ];
        let packed = AllocReasons::from(list.clone());
        assert_eq!(packed.len(), 4);
        assert_eq!(packed.to_vec(), list);
        assert_eq!(packed.get(3).map(|r| r.to_owned()), Some(list[3].clone()));
        assert_eq!(packed.get(4), None);
        assert_eq!(format!("{packed:?}"), format!("{list:?}"));
        let json = serde_json::to_string(&packed).expect("serialize");
        assert_eq!(json, serde_json::to_string(&list).expect("serialize"));
        let back: AllocReasons = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, packed);
        assert_ne!(back, AllocReasons::from(list[..3].to_vec()));
        let empty = AllocReasons::new();
        assert!(empty.is_empty());
        assert_eq!(serde_json::to_string(&empty).expect("serialize"), "[]");
        assert_eq!(AllocReasons::from(Vec::new()), empty);
    }

    /// An eval processed with `reasons`.
    fn processed(reasons: &[AllocReason]) -> TraceEvent {
        planned(reasons, &[])
    }

    /// An eval processed with `reasons` and `plan`.
    fn planned(reasons: &[AllocReason], plan: &[&str]) -> TraceEvent {
        TraceEvent::EvalProcessed(Box::new(EvalProcessed {
            eval: "e1".into(),
            job: "web".into(),
            trigger: "node-update".into(),
            desired_tg_updates: GroupUpdates::new(),
            reasons: reasons.to_vec().into(),
            plan: plan.iter().map(|line| line.to_string()).collect(),
            status: "complete".into(),
        }))
    }

    /// The plan lines of a processed eval.
    fn plan_of(event: &TraceEvent) -> &PlanLines {
        let TraceEvent::EvalProcessed(processed) = event else {
            panic!("not a processed eval");
        };
        &processed.plan
    }

    /// Plan lines serialize, print and compare as the list of texts; the
    /// history keeps one copy of a line that later evals repeat.
    #[test]
    fn plan_lines_read_as_the_list_and_repeats_are_shared() {
        let lines = [
            "node-a: stop web.web[0](a1)",
            "node-b: place web.web[1](a2)",
        ];
        let mut first = planned(&[], &lines);
        let mut again = planned(&[], &[lines[1], "node-c: update web.web[2](a3)"]);
        let plan = plan_of(&first);
        assert_eq!(plan.len(), 2);
        assert!(plan.iter().map(|line| &**line).eq(lines));
        assert_eq!(format!("{plan:?}"), format!("{lines:?}"));
        let json = serde_json::to_string(plan).expect("serialize");
        assert_eq!(json, serde_json::to_string(&lines).expect("serialize"));
        let back: PlanLines = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(&back, plan);
        assert_eq!(
            serde_json::to_string(&PlanLines::default()).expect("serialize"),
            "[]"
        );
        let text = first.columns().2;
        assert!(text.ends_with(
            " | plan: node-a: stop web.web[0](a1) | plan: node-b: place web.web[1](a2)"
        ));
        let mut subjects = AllocSubjects::default();
        subjects.share(&mut first);
        subjects.share(&mut again);
        assert!(SharedText::ptr_eq(&plan_of(&first)[1], &plan_of(&again)[0]));
        assert!(!SharedText::ptr_eq(
            &plan_of(&first)[0],
            &plan_of(&again)[1]
        ));
        assert_eq!(first.columns().2, text);
    }

    /// The reasons of one event, to compare subjects by address.
    fn subject_ptrs(event: &TraceEvent) -> Vec<*const super::AllocSubject> {
        reason_ptrs(event, |item| &item.subject)
    }

    /// The addresses of one shared part, `part`, of each of an event's reasons.
    fn reason_ptrs(
        event: &TraceEvent,
        part: impl Fn(&super::PackedReason) -> &Rc<super::AllocSubject>,
    ) -> Vec<*const super::AllocSubject> {
        let TraceEvent::EvalProcessed(processed) = event else {
            return Vec::new();
        };
        processed
            .reasons
            .items
            .iter()
            .map(|item| Rc::as_ptr(part(item)))
            .collect()
    }

    /// Reasons of different evals that name the same alloc end up sharing
    /// one subject, and still read back, print and serialize as before; an
    /// alloc with the same text split differently is another subject.
    #[test]
    fn reasons_naming_one_alloc_share_its_subject() {
        let first = [
            reason("a1-uuid", "web.web[0]", "lost -> stop", "node down"),
            reason("a2-uuid", "web.web[1]", "lost -> stop", "node down"),
        ];
        let second = [
            reason(
                "a2-uuid",
                "web.web[1]",
                "disconnecting -> ignore",
                "waiting",
            ),
            reason("a2-uuidw", "eb.web[1]", "x", "y"),
            reason("a1-uuid", "web.web[0]", "untainted -> migrate", "drain"),
        ];
        let mut subjects = AllocSubjects::default();
        let mut one = processed(&first);
        let mut two = processed(&second);
        let (json_one, json_two) = (
            serde_json::to_string(&one).expect("serialize"),
            serde_json::to_string(&two).expect("serialize"),
        );
        let text_two = two.columns().2;
        subjects.share(&mut one);
        subjects.share(&mut two);
        assert_eq!(subjects.len(), 3);
        let (a, b) = (subject_ptrs(&one), subject_ptrs(&two));
        assert_eq!((a[0], a[1]), (b[2], b[0]));
        assert_ne!(b[1], a[1]);
        assert_eq!(serde_json::to_string(&one).expect("serialize"), json_one);
        assert_eq!(serde_json::to_string(&two).expect("serialize"), json_two);
        assert_eq!(two.columns().2, text_two);
        assert_eq!(two, processed(&second));
        let mut again = processed(&second);
        subjects.share(&mut again);
        assert_eq!(subject_ptrs(&again), b);
        assert_eq!(subjects.len(), 3);
        // One (set, reason) pair per distinct pair: within an eval, and
        // across evals once the history shared them.
        let whys = |event: &TraceEvent| reason_ptrs(event, |item| &item.why);
        let (w1, w2) = (whys(&one), whys(&again));
        assert_eq!(w1[0], w1[1]);
        assert_ne!(w2[0], w2[1]);
        assert_eq!(whys(&two), w2);
        let mut lost_again = processed(&first[..1]);
        subjects.share(&mut lost_again);
        assert_eq!(whys(&lost_again), vec![w1[0]]);
    }

    /// Reasons built with the world's texts name an alloc by its stored
    /// subject: one copy across evals, which the history keeps as it is.
    #[test]
    fn built_reasons_take_the_stored_subject() {
        let mut texts = SharedTexts::default();
        let mut build = |reasons: &[(&str, &str)]| {
            let mut builder = AllocReasonsBuilder::default();
            for (alloc, name) in reasons {
                builder.push(&mut texts, alloc, name, "lost -> stop", "node down");
            }
            let mut event = processed(&[]);
            if let TraceEvent::EvalProcessed(p) = &mut event {
                p.reasons = builder.finish();
            }
            event
        };
        let one = build(&[("a1", "web.web[0]"), ("a2", "web.web[1]")]);
        let mut two = build(&[("a2", "web.web[1]"), ("a1", "web.web[0]")]);
        let (a, b) = (subject_ptrs(&one), subject_ptrs(&two));
        assert_eq!((a[0], a[1]), (b[1], b[0]));
        let mut subjects = AllocSubjects::default();
        subjects.share(&mut two);
        assert_eq!(subject_ptrs(&two), b);
        assert_eq!(
            two,
            processed(&[
                reason("a2", "web.web[1]", "lost -> stop", "node down"),
                reason("a1", "web.web[0]", "lost -> stop", "node down"),
            ])
        );
    }

    /// An alloc change serializes, prints and reads back as the flat
    /// object it was, and shares its alloc's subject with the reasons
    /// that name the same alloc.
    #[test]
    fn alloc_changes_stay_flat_and_share_their_subject() {
        let mut change = TraceEvent::AllocChanged(AllocChange::new(
            "a1-uuid-0000",
            "web.web[0]",
            "node-a".into(),
            "client status unknown".into(),
        ));
        let json = serde_json::to_string(&change).expect("serialize");
        assert_eq!(
            json,
            r#"{"kind":"alloc_changed","alloc":"a1-uuid-0000","name":"web.web[0]","node":"node-a","detail":"client status unknown"}"#
        );
        let back: TraceEvent = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, change);
        assert_eq!(
            format!("{back:?}"),
            r#"AllocChanged(AllocChange { alloc: "a1-uuid-0000", name: "web.web[0]", node: "node-a", detail: "client status unknown" })"#
        );
        assert_eq!(
            change.columns().2,
            "web.web[0] a1-uuid- on node-a: client status unknown"
        );
        let mut subjects = AllocSubjects::default();
        let mut listed = processed(&[reason("a1-uuid-0000", "web.web[0]", "lost", "down")]);
        subjects.share(&mut listed);
        subjects.share(&mut change);
        let mut other = TraceEvent::AllocChanged(AllocChange::new(
            "a2-uuid-0000",
            "web.web[1]",
            "node-b".into(),
            "client status unknown".into(),
        ));
        subjects.share(&mut other);
        let (TraceEvent::AllocChanged(shared), TraceEvent::AllocChanged(second)) =
            (&change, &other)
        else {
            panic!("not an alloc change");
        };
        assert_eq!(subject_ptrs(&listed), vec![Rc::as_ptr(&shared.subject)]);
        assert!(SharedText::ptr_eq(&shared.detail, &second.detail));
        assert_eq!(subjects.len(), 2);
        assert_eq!(serde_json::to_string(&change).expect("serialize"), json);
    }

    /// A heartbeat's words kept as numbers read, print and serialize as
    /// the texts they stand for (the ones the heartbeat path wrote before),
    /// equal the same text read back, and take no more room than a text.
    #[test]
    fn heartbeat_details_read_as_their_texts() {
        use crate::model::NodeStatus;
        let cases = [
            (
                CallDetail::heartbeat(&NodeStatus::Ready, 12_345),
                "status=ready ttl=12.345s",
            ),
            (
                CallDetail::heartbeat(&NodeStatus::Initializing, 10_000),
                "status=initializing ttl=10.000s",
            ),
            (
                CallDetail::heartbeat(&NodeStatus::Down, 5),
                "status=down ttl=0.005s",
            ),
            (
                CallDetail::heartbeat(&NodeStatus::Disconnected, 1_234_567),
                "status=disconnected ttl=1234.567s",
            ),
            (CallDetail::ttl(16_401), "ttl=16.401"),
            (CallDetail::ttl(0), "ttl=0.000"),
            // Kept as texts: a status of another version, a TTL past u32.
            (
                CallDetail::heartbeat(&NodeStatus::Other("resting".into()), 1_000),
                "status=resting ttl=1.000s",
            ),
            (CallDetail::ttl(5_000_000_000), "ttl=5000000.000"),
        ];
        for (detail, text) in cases {
            assert_eq!(detail.text(), text);
            assert_eq!(detail.to_string(), text);
            assert_eq!(format!("{detail:?}"), format!("{text:?}"));
            let mut out = String::from("> ");
            detail.push_to(&mut out);
            assert_eq!(out, format!("> {text}"));
            let json = serde_json::to_string(&detail).expect("serialize");
            assert_eq!(json, serde_json::to_string(text).expect("serialize"));
            let back: CallDetail = serde_json::from_str(&json).expect("read back");
            assert!(matches!(back, CallDetail::Text(_)));
            assert_eq!(back, detail, "{text}");
            assert_eq!(detail, back, "{text}");
            assert!(!detail.is_empty());
        }
        assert!(matches!(
            CallDetail::heartbeat(&NodeStatus::Ready, 1),
            CallDetail::Heartbeat {
                ttl: 1,
                form: HeartbeatForm::Ready
            }
        ));
        assert!(matches!(
            CallDetail::ttl(5_000_000_000),
            CallDetail::Text(_)
        ));
        assert_ne!(CallDetail::ttl(1), CallDetail::ttl(2));
        assert_ne!(
            CallDetail::ttl(1),
            CallDetail::heartbeat(&NodeStatus::Ready, 1)
        );
        assert!(CallDetail::from("").is_empty());
        assert_eq!(
            std::mem::size_of::<CallDetail>(),
            std::mem::size_of::<Text>()
        );
    }

    /// The history keeps every entry: the common entry stays small (on
    /// 64-bit targets; WebAssembly's are smaller still).
    #[test]
    fn a_trace_entry_takes_at_most_48_bytes() {
        let size = std::mem::size_of::<TraceEntry>();
        assert!(size <= 48, "{size} bytes");
        let size = std::mem::size_of::<TraceEvent>();
        assert!(size <= 32, "{size} bytes");
    }

    /// Broker states print, serialize and read back as their names; an
    /// unknown name is an error.
    #[test]
    fn broker_states_read_back_and_unknown_ones_are_refused() {
        for state in BrokerState::ALL {
            let json = serde_json::to_string(&state).expect("serialize");
            assert_eq!(json, format!("\"{state}\""));
            assert_eq!(format!("{state:?}"), json);
            let back: BrokerState = serde_json::from_str(&json).expect("deserialize");
            assert_eq!(back, state);
        }
        assert_eq!(&*BrokerState::NotReady, "not-ready");
        assert!(serde_json::from_str::<BrokerState>("\"waiting\"").is_err());
    }

    /// RPC names print and serialize as the names, and read back; an
    /// unknown name is an error.
    #[test]
    fn rpc_names_read_back_and_unknown_ones_are_refused() {
        for name in RpcName::ALL {
            let json = serde_json::to_string(&name).expect("serialize");
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(*name, *name.as_str());
            let back: RpcName = serde_json::from_str(&json).expect("deserialize");
            assert_eq!(back, name);
        }
        assert_eq!(RpcName::NodeUpdateStatus, "Node.UpdateStatus");
        assert!(serde_json::from_str::<RpcName>("\"Node.Nothing\"").is_err());
    }

    /// Events naming the same node end up sharing one name; the boxed eval
    /// events serialize as flat objects, as the struct variants did.
    #[test]
    fn node_names_are_shared_and_eval_events_stay_flat() {
        let mut names = SharedTexts::default();
        let mut first = TraceEvent::Client {
            node: "node-a".into(),
            detail: "x".into(),
        };
        let mut second = TraceEvent::PlanRejected {
            node: "node-a".into(),
            reason: "y".into(),
        };
        let mut other = TraceEvent::Link {
            node: "node-b".into(),
            detail: "down".into(),
        };
        names.share(&mut first);
        names.share(&mut other);
        let mut later = names.clone();
        later.share(&mut second);
        let ([Some(a), ..], [Some(b), ..], [Some(c), ..]) = (
            first.shared_texts_mut(),
            second.shared_texts_mut(),
            other.shared_texts_mut(),
        ) else {
            panic!("events without nodes");
        };
        assert!(SharedText::ptr_eq(a, b));
        assert!(!SharedText::ptr_eq(a, c));
        assert_eq!(&**b, "node-a");
        let missed = || {
            TraceEvent::HeartbeatMissed(Box::new(super::HeartbeatMissed {
                node: "node-a".into(),
                requested: "disconnected".into(),
                reason: "allocs may wait 5m".into(),
            }))
        };
        let (mut one, mut two) = (missed(), missed());
        names.share(&mut one);
        names.share(&mut two);
        let ([_, Some(a), Some(b), _], [_, Some(c), Some(d), _]) =
            (one.shared_texts_mut(), two.shared_texts_mut())
        else {
            panic!("heartbeat misses without texts");
        };
        assert!(SharedText::ptr_eq(a, c) && SharedText::ptr_eq(b, d));
        assert_eq!(
            serde_json::to_string(&one).expect("serialize"),
            r#"{"kind":"heartbeat_missed","node":"node-a","requested":"disconnected","reason":"allocs may wait 5m"}"#
        );
        let created = TraceEvent::EvalCreated(Box::new(EvalCreated {
            eval: "e1".into(),
            job: "web".into(),
            trigger: "job-register".into(),
            node: "".into(),
            wait_until: Some(5),
            status: "pending".into(),
        }));
        let json = serde_json::to_string(&created).expect("serialize");
        assert_eq!(
            json,
            r#"{"kind":"eval_created","eval":"e1","job":"web","trigger":"job-register","node":"","wait_until":5,"status":"pending"}"#
        );
        let back: TraceEvent = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, created);
    }

    /// The table keeps one copy of each of many texts as it grows.
    #[test]
    fn shared_texts_keep_one_copy_of_each_of_many_texts() {
        let mut texts = SharedTexts::default();
        let event = |i: usize| TraceEvent::Client {
            node: format!("node-{i:03}").into(),
            detail: "x".into(),
        };
        let mut first: Vec<TraceEvent> = (0..500).map(event).collect();
        for event in &mut first {
            texts.share(event);
        }
        for (i, earlier) in first.iter_mut().enumerate() {
            let mut again = event(i);
            texts.share(&mut again);
            let ([Some(a), ..], [Some(b), ..]) =
                (earlier.shared_texts_mut(), again.shared_texts_mut())
            else {
                panic!("events without nodes");
            };
            assert!(SharedText::ptr_eq(a, b));
            assert_eq!(&**b, format!("node-{i:03}"));
        }
    }

    /// A text another table stores is left as it is (sharing it again
    /// would change nothing but where it lives), and a table's own copy is
    /// what a new equal text is pointed at.
    #[test]
    fn a_stored_copy_is_kept_and_new_copies_take_it() {
        let mut one = SharedTexts::default();
        let mut other = SharedTexts::default();
        let theirs = other.text("node-a");
        let mut event = TraceEvent::PlanRejected {
            node: theirs.clone(),
            reason: "r".into(),
        };
        one.share(&mut event);
        let [Some(node), Some(reason), ..] = event.shared_texts_mut() else {
            panic!("a rejection without texts");
        };
        assert!(SharedText::ptr_eq(node, &theirs));
        let reason = reason.clone();
        let mut again = TraceEvent::PlanRejected {
            node: "node-a".into(),
            reason: "r".into(),
        };
        one.share(&mut again);
        let [Some(node), Some(second), ..] = again.shared_texts_mut() else {
            panic!("a rejection without texts");
        };
        assert!(SharedText::ptr_eq(second, &reason));
        assert!(SharedText::ptr_eq(node, &one.text("node-a")));
    }

    /// Group updates collect as a map does: sorted by group, the last
    /// value of a repeated group winning, whether they come sorted or not.
    #[test]
    fn group_updates_collect_as_a_map() {
        use crate::model::eval::DesiredUpdates;
        let counts = |place: u64| DesiredUpdates {
            place,
            ..DesiredUpdates::default()
        };
        let lists = [
            vec![],
            vec![("web", 1)],
            vec![("api", 1), ("web", 2)],
            vec![("web", 1), ("api", 2)],
            vec![("web", 1), ("api", 2), ("web", 3)],
            vec![("api", 1), ("api", 2)],
        ];
        for list in lists {
            let pairs = || {
                list.iter()
                    .map(|(group, n)| (group.to_string(), counts(*n)))
            };
            let collected: GroupUpdates = pairs().collect();
            let map: std::collections::BTreeMap<String, DesiredUpdates> = pairs().collect();
            assert_eq!(collected.to_map(), map, "{list:?}");
            assert_eq!(collected, GroupUpdates::from(map), "{list:?}");
        }
    }

    /// The shared parts the history keeps one of per distinct text and
    /// alloc stay small: a text in 24 bytes with its stored flag, an alloc
    /// in 32 with its hash too (kept: the world's table looks allocs up by
    /// their two parts and grows without hashing them again).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn shared_parts_stay_small() {
        assert_eq!(std::mem::size_of::<super::SharedTextInner>(), 24);
        assert_eq!(std::mem::size_of::<super::AllocSubject>(), 32);
    }

    /// Texts compare equal by `same_bytes` exactly when their bytes are
    /// equal, whatever their length.
    #[test]
    fn same_bytes_is_byte_equality() {
        for len in 0..=24_usize {
            let text: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(super::same_bytes(&text, &text.clone()));
            assert!(!super::same_bytes(&text, &text[..len.saturating_sub(1)]) || len == 0);
            for at in 0..len {
                let mut changed = text.clone();
                changed[at] ^= 0x20;
                assert!(!super::same_bytes(&text, &changed), "len {len}, byte {at}");
            }
        }
    }

    /// The tables' hash reads every byte of a text, whatever its length
    /// (the tail of a text is read in overlapping words).
    #[test]
    fn the_text_hash_reads_every_byte() {
        for len in 0..=40_usize {
            let text: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let hash = super::text_hash(&text, 0);
            for at in 0..len {
                let mut changed = text.clone();
                changed[at] ^= 0x20;
                assert_ne!(super::text_hash(&changed, 0), hash, "len {len}, byte {at}");
            }
            assert_ne!(super::text_hash(&text, 1), hash, "len {len}: the seed");
        }
        assert_ne!(super::text_hash(b"", 0), super::text_hash(b"\0", 0));
    }

    /// `short` is the first 8 characters (bytes, for ASCII IDs), or the
    /// whole ID when it is shorter.
    #[test]
    fn short_is_the_first_eight_characters() {
        for id in [
            "",
            "abc",
            "12345678",
            "123456789abc",
            "é1234567xyz",
            "abcdefgé",
            "abcdefghé",
        ] {
            let expected: String = id.chars().take(8).collect();
            assert_eq!(super::short(id), expected, "{id:?}");
        }
    }

    /// `text` hands back the copy the table holds, whether `text` or
    /// `share` stored it first, and stores a new text once.
    #[test]
    fn text_returns_the_stored_copy() {
        let mut texts = SharedTexts::default();
        let mut shared = TraceEvent::Client {
            node: "node-a".into(),
            detail: "x".into(),
        };
        texts.share(&mut shared);
        let [Some(stored), ..] = shared.shared_texts_mut() else {
            panic!("an event without a node");
        };
        let stored = stored.clone();
        assert!(SharedText::ptr_eq(&texts.text("node-a"), &stored));
        let new = texts.text("node-b");
        assert_eq!(&*new, "node-b");
        assert!(SharedText::ptr_eq(&texts.text("node-b"), &new));
        let mut later = TraceEvent::Client {
            node: "node-b".into(),
            detail: "y".into(),
        };
        texts.share(&mut later);
        let [Some(node), ..] = later.shared_texts_mut() else {
            panic!("an event without a node");
        };
        assert!(SharedText::ptr_eq(node, &new));
    }
}
