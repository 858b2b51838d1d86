//! Which algorithm a request gets: pure functions of the request's facts (the row length n, K, the
//! value type, the stride along the axis, the sequences beside each other, the number of sequences, the
//! scratch given) and of the engine's ([`Capabilities`]: its vectors, and the CPU's family where a
//! choice depends on it). Nothing here reads memory or the CPU; the kernels execute what these return
//! and choose nothing themselves, but for what the data decide (a bound that does not hold, a pass that
//! pushes too many).
//!
//! ```text
//! walk   the reference         Backend::Naive
//!        broadcast             a zero stride along the axis: positions 0..K, no reads
//!        side by side          a non-last axis whose neighbouring sequences are adjacent (stride 1):
//!                              one sequence per lane, K <= 16 in sorted vector slots, larger K with a
//!                              candidate buffer per lane where the scratch holds them, but short
//!                              8-bit sequences with a large K, counted one at a time as rows
//!        tiles                 many rows of at most 32: copied into a tile and read side by side
//!        rows                  everything else, a run of rows at a time
//! row    bisect                8/16-bit keys, 64 <= n <= 2048, a large K: under the exact K-th key
//!        count                 8/16-bit keys with K a large part of the row
//!        first best            K = 1 where `scalar` would be: a running best, no candidates
//!        scalar                the scalar engine, strided rows, and every engine of a target without
//!                              SIMD engines (firmware)
//!        all                   K > 16 and at least n / 2: every element a candidate
//!        filter                the block filter and its short-row steps (`kernels::row::Steps`)
//! ```
//! Each tuned constant says why in a line and names the benchmark case or set that sets it; BENCHMARKS.md
//! has its measured crossover in its table of decisions.

use core::mem::size_of;

use crate::dispatch::engine::{Backend, Engine};
use crate::dispatch::isa;
use crate::kernels::bisect;
use crate::kernels::bound::PREFIX;
use crate::kernels::candidates;
use crate::kernels::collect::COLLECT_BYTES;
use crate::kernels::entry::packs_in_one_word;
use crate::kernels::filter::{HALF_K, SMALL_K, Steps};
use crate::kernels::lanes::UNROLL;
use crate::kernels::row::{Method, WHOLE_ROW_BYTES};
use crate::simd::cpu::Facts as Cpu;
use crate::simd::vector::MAX_LANES;
use crate::types::data_type::DataType;
use crate::types::element::{Element, Key};
use crate::types::view::Layout;

/// The largest K read side by side with each lane's best K in sorted vector slots (larger K takes a
/// candidate buffer per lane).
pub(crate) const COLUMNS_MAX_K: usize = SMALL_K;

/// Whether this target has SIMD engines. The paths that pay only with them (neighbouring sequences read
/// side by side, tiles of short rows) are taken only here: elsewhere (firmware) strided sequences are
/// read one at a time, and the columns' kernels stay out of the flash.
pub(crate) const SIMD_ENGINES: bool = cfg!(simd_arch);

/// Longest rows read side by side from a tile: its `TINY · MAX_LANES` elements take 4 KiB of stack for
/// 64-bit types. Set by rows of 8 to 32 f32 with K of 1 and 2 (`benches/sweep.py --set tiny`).
pub(crate) const TINY: usize = 32;

/// What the strategy knows of an engine: its vectors for each element width, and the CPU it runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Capabilities {
    /// The scalar engine: no vectors at all.
    pub(crate) scalar: bool,
    /// Vectors for elements of 8 to 32 bits.
    pub(crate) v32: Vectors,
    /// Vectors for 64-bit elements.
    pub(crate) v64: Vectors,
    /// Whether its vectors are 512 bits wide (AVX-512's).
    pub(crate) wide: bool,
    /// The CPU's vendor and family, where a choice depends on it.
    pub(crate) cpu: Cpu,
}

/// One width of an engine's vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Vectors {
    /// Lanes a vector holds.
    pub(crate) lanes: usize,
    /// Whether these are a SIMD instruction set's registers, which take the short-row steps the
    /// portable lanes leave out (`Vector::SPECIALIZE`).
    pub(crate) simd: bool,
    /// Whether they collect what is below a bound without a branch per lane: a compress, or a sorting
    /// network to order what was collected.
    pub(crate) collect: bool,
}

impl Vectors {
    /// The vectors of an engine with a capability for each; `collect` only where `simd`.
    const fn new(lanes: usize, simd: bool, collect: bool) -> Self {
        Vectors {
            lanes,
            simd,
            collect: collect && simd,
        }
    }
}

/// The rows a kernel is given, as the strategy sees them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rows {
    /// The value type.
    pub(crate) data_type: DataType,
    /// Elements in each row (n).
    pub(crate) len: usize,
    /// K, at least 1.
    pub(crate) k: usize,
    /// Elements from one position of a row to the next (1: contiguous).
    pub(crate) stride: isize,
    /// Whether the caller wants only keys below a cap of its own (an accumulator's K-th key).
    pub(crate) capped: bool,
}

/// How each row of a run is selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RowPlan {
    /// First whether the row is already in order (`kernels::ordered`), its own answer if so.
    pub(crate) ordered: bool,
    /// Then under the exact K-th key found by bisection; the rows it declines (a K-th key that
    /// excludes nothing, too many ties) go on to `then`.
    pub(crate) bisect: bool,
    /// Whether each row, strided, is first copied onto the stack and selected there as a contiguous
    /// one (the rest of the plan is for that row).
    pub(crate) gather: bool,
    /// The algorithm.
    pub(crate) then: Row,
}

/// The algorithm for one row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Row {
    /// Counting the keys (8- and 16-bit keys, K a large part of the row): `kernels::count`.
    Count,
    /// The threshold filter one element at a time: `kernels::scalar`.
    Scalar,
    /// K = 1 as a running best, one element at a time: `kernels::scalar::first_best`.
    FirstBest,
    /// On the engine's vectors: `kernels::row`.
    Vectors(Method),
}

/// How a call walks its sequences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    /// One sequence at a time through the reference (`Backend::Naive`).
    Reference,
    /// A zero stride along the axis: every element of a sequence is the same element, so they all tie
    /// and the first K are positions 0..K, whatever n (a broadcast view can make it 2^63).
    Broadcast,
    /// Runs of neighbouring sequences side by side, one per lane; what a run leaves, one at a time.
    Columns,
    /// Groups of [`MAX_LANES`] short rows copied into a tile and read side by side from it.
    Tiles,
    /// A run of rows along one dimension at a time.
    Rows,
}

/// What the strategy knows of a call: its rows, how many, and how they lie beside each other.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Call {
    /// The rows.
    pub(crate) rows: Rows,
    /// Sequences the call runs.
    pub(crate) sequences: usize,
    /// Whether neighbouring sequences are adjacent in memory (stride 1 along a dimension other than
    /// the axis, more than one of them: [`columns_dimension`]).
    pub(crate) columns: bool,
    /// Whether the scratch holds a candidate buffer per lane ([`fastest_scratch_words`]).
    pub(crate) column_buffers: bool,
}

/// The backend `requested` stands for on rows like `rows`: `Auto` is the `widest` engine this CPU has, but
/// AVX2 on Zen 4 for short contiguous rows of whole AVX2 blocks (up to 512 elements, a multiple of
/// 32) of up to 32-bit elements with K of 2 to 16: Zen 4's 512-bit shuffles take two passes, and the
/// per-row work of AVX-512 (the prefix bound's sort of group minima, the compress of each block's
/// positions) costs more than AVX2's there. Other lengths cost AVX2 a masked tail, where AVX-512 wins.
/// Set by `moe4096x256_k8` and rows of 128 to 512 (`benches/sweep.py --set moe`) on a Zen 4.
pub(crate) fn backend(requested: Backend, widest: Backend, rows: &Rows, cpu: Cpu) -> Backend {
    if requested != Backend::Auto {
        return requested;
    }
    let len = rows.len;
    let short = len <= 512 && len.is_multiple_of(32) && (2..=16).contains(&rows.k) && rows.data_type.size() <= 4;
    if widest == Backend::Avx512 && short && rows.stride == 1 && cpu.zen4 {
        Backend::Avx2
    } else {
        widest
    }
}

/// How a call on `engine` (`None`: the reference) walks its sequences.
pub(crate) fn walk(engine: Option<&Capabilities>, call: &Call) -> Walk {
    let Some(engine) = engine else {
        return Walk::Reference;
    };
    let Rows {
        data_type,
        len,
        k,
        stride,
        ..
    } = call.rows;
    if stride == 0 {
        return Walk::Broadcast;
    }
    let has_vectors = !engine.scalar;
    // Short sequences of 8-bit keys with a large K are counted one at a time, strided: the lanes'
    // buffers would sort what the counters order without a compare.
    let counted = data_type.size() == 1 && len <= COUNTED_COLUMNS_MAX_LEN && counts(data_type, len, k, engine.wide);
    // 64-bit keys with K above 8 in sequences short enough: gathered a row at a time, which costs them
    // less than sixteen slots' insertions on their few lanes, or the lanes' buffers.
    let gathered = data_type.size() == 8 && k > HALF_K && len <= GATHERED_MAX_LEN;
    if SIMD_ENGINES
        && call.columns
        && has_vectors
        && !gathered
        && (k <= COLUMNS_MAX_K || (call.column_buffers && !counted))
    {
        return Walk::Columns;
    }
    // K = 1 is a running best a row (`first_best`), whose rows cost less than a tile's copy; but not
    // for 16-bit floats of 5 elements or more, whose keys the tile's lanes take 16 to a vector.
    let half_float = matches!(data_type, DataType::F16 | DataType::Bf16);
    let first_best =
        engine.v32.simd && k == 1 && (len >= MAX_LANES || !half_float || len <= HALF_FLOAT_FIRST_BEST_MAX_LEN);
    if SIMD_ENGINES
        && has_vectors
        && (2..=TINY).contains(&len)
        && k <= COLUMNS_MAX_K
        && !first_best
        && call.sequences >= MAX_LANES
    {
        return Walk::Tiles;
    }
    Walk::Rows
}

/// Longest sequences of 8-bit keys beside each other counted one at a time rather than read side by
/// side with a candidate buffer each: a sequence's cache lines (one an element) stay in the L1 for its
/// neighbours' counts, which longer ones lose. Set by u8 183x659 and i8 790x827x45 along axis 0 with
/// K = n.
const COUNTED_COLUMNS_MAX_LEN: usize = 512;

/// Longest rows of 16-bit floats whose K = 1 is a running best a row rather than a tile: f16 50000x6
/// along axis 1 took 3.7 floors a row at a time and 2.9 in tiles, 100000x4 3.4 and 4.0.
const HALF_FLOAT_FIRST_BEST_MAX_LEN: usize = 4;

/// The algorithm for sequences read side by side ([`Walk::Columns`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ColumnMethod {
    /// Each lane's best K in sorted vector slots, or above [`COLUMNS_MAX_K`] a candidate buffer per lane
    /// ([`columns::select_columns`](crate::kernels::columns::select_columns)).
    Slots,
    /// K = 1 as a running best key and position per lane
    /// ([`columns::first_best_of_columns`](crate::kernels::columns::first_best_of_columns)).
    FirstBest,
}

/// Longest sequences read side by side whose K = 1 is a running best per lane rather than sorted
/// slots: the slots' setup is most of a short sequence's cost, and on long ones their compare-only rows
/// win. Set by f32 8 to 64 x 65536 and 4096 x 256 on axis 0 with K = 1, and the sweep's short axes
/// (`benches/sweep.py --set short`).
const FIRST_BEST_COLUMNS_MAX_LEN: usize = 32;

/// How sequences of `len` read side by side select their first `k`.
pub(crate) fn columns(k: usize, len: usize) -> ColumnMethod {
    if k == 1 && len <= FIRST_BEST_COLUMNS_MAX_LEN {
        ColumnMethod::FirstBest
    } else {
        ColumnMethod::Slots
    }
}

/// How each of `rows` is selected on `engine`.
pub(crate) fn row(engine: &Capabilities, rows: &Rows) -> RowPlan {
    let Rows {
        data_type,
        len,
        k,
        stride,
        capped,
    } = *rows;
    // Strided rows short enough are copied onto the stack: the vector paths beat the scalar engine
    // in place, which K = 1's running best does not need.
    let gather =
        SIMD_ENGINES && !engine.scalar && stride != 1 && stride != 0 && (2..=GATHERED_MAX_LEN).contains(&len) && k > 1;
    let contiguous = stride == 1 || len <= 1 || gather;
    // Not under a cap: counting and bisection read every element whatever the cap, where the filter
    // under a K-th key carried from earlier chunks passes few.
    let bisect = engine.v32.simd && contiguous && !capped && bisects(data_type, len, k);
    let then = if !capped && counts(data_type, len, k, engine.wide) {
        Row::Count
    } else if k == 1 && !capped && (engine.scalar || !contiguous || len < MAX_LANES) {
        // One element at a time, K = 1 needs no candidates: a running best.
        Row::FirstBest
    } else if engine.scalar || !contiguous {
        Row::Scalar
    } else if k > SMALL_K && len <= candidates::capacity(len, k) {
        // K at least half the row: nothing to filter, every element is a candidate.
        Row::Vectors(Method::All)
    } else {
        Row::Vectors(Method::Filter(steps(engine, rows)))
    };
    RowPlan {
        ordered: SIMD_ENGINES
            && !engine.scalar
            && contiguous
            && !capped
            && ((k > 1 && 2 * k >= len)
                || (k > ORDERED_MIN_K
                    && (len >= ORDERED_MIN_LEN || k >= ORDERED_SHORT_MIN_K || data_type.size() == 8)
                    && len < ORDERED_MAX_RATIO.saturating_mul(k))),
        bisect,
        gather,
        then,
    }
}

/// Longest strided rows copied into a contiguous row on the stack ([`RowPlan::gather`]): 4 KiB of
/// 64-bit elements.
pub(crate) const GATHERED_MAX_LEN: usize = 512;

/// K above which rows are first checked for being in order: a row in order passes a filter almost
/// whole when its best are last, and the K it keeps are sorted again; random rows stop the check within
/// a few pairs. Below, the filter's pool keeps a sorted row in time near its read. Set by
/// `benches/sweep.py --set sorted`. Rows whose K is at least half of them are checked from K = 2: their
/// check is a small part of sorting most of the row (4096 x 100 f32 with K = 50, ascending).
const ORDERED_MIN_K: usize = SMALL_K;
/// Rows at least this many times K long are not checked: there the filter's bail-out samples a sorted
/// row in about the time of the check's read (`sorted1m_k100`, and 1M ascending f32 with K = 300),
/// while from n/K = 1000 down to the bail-out's own limit ([`BAIL_MIN_RATIO`]) it falls off (K = 1000
/// to 3800: 3 to 20 times the check's time).
const ORDERED_MAX_RATIO: usize = 1024;
/// Shortest rows checked for being in order below [`ORDERED_SHORT_MIN_K`]: on shorter ones the check's
/// first pairs cost random rows a few percent (4096 x 256 and 8192 x 100 f32 with K of 17 to 24), and a
/// sorted row is cheap anyway.
const ORDERED_MIN_LEN: usize = 1024;
/// K from which shorter rows are checked too: their selection's work dwarfs the check's first pairs,
/// and rows in order cost them several times a random row's (4096 x 256 f16 with K = 128, ascending;
/// `benches/sweep.py --set sorted`). Rows of 64-bit keys are checked from K > 16 at any length: their
/// candidates cost twice as much (u64 393 x 368 with K = 42, ascending).
const ORDERED_SHORT_MIN_K: usize = 64;

/// Rows shorter than this many times K never bail out to sampling: the sample would be a large part of
/// the row. Set by `sorted1m_k100` and ascending rows of 64k with K of 100 to 1000.
const BAIL_MIN_RATIO: usize = 256;

/// Rows up to this long with K = 1 take `first_best`'s two passes; longer ones keep the filter's one,
/// which reads the row once. Set by rows of 512 to 4096 f32 with K = 1 (`benches/sweep.py
/// --set argmax`).
const FIRST_BEST_MAX: usize = PREFIX + PREFIX / 2;

/// K from which long rows guess a cap: the sorted pool of smaller K has an exact threshold from the
/// K-th push on, and the guess does not pay there. Set by rows of 128k f16 with K of 8 to 16
/// (`llm32x128k_k50_f16` at other K).
const GUESS_MIN_K: usize = SMALL_K + 1;

/// K from which 8- and 16-bit rows are scanned in chunks: their scans are bound by their instructions
/// (widening or converting loads, AVX-512's 16-bit compares), not by memory, and a restart wastes the
/// most there. Smaller K keeps a sorted pool whose threshold is exact from the K-th push on, and pushes
/// too few for chunks to pay. 32- and 64-bit rows, read at the memory's speed, lose with chunks. Set by
/// `llm32x128k_k50_f16` and `llm32x128k_k50`.
const CHUNKED_MIN_K: usize = SMALL_K + 1;

/// Rows at least this many times K long have survivors too sparse for chunks on Zen 5, whose exits
/// from the scan are cheap: the guessed cap lets about 3 K through, one every 500 elements or more. Set
/// by rows of 32k to 512k f16 with K of 50 to 200 on a Zen 5.
const SPARSE_RATIO: usize = 1536;

/// The steps of the block filter a row takes ([`Steps`]; the module doc of `kernels::row` has each).
fn steps(engine: &Capabilities, rows: &Rows) -> Steps {
    let Rows {
        data_type,
        len,
        k,
        capped,
        ..
    } = *rows;
    let bytes = data_type.size();
    let vectors = if bytes == 8 { engine.v64 } else { engine.v32 };
    let entry = if packs_in_one_word(8 * bytes as u32, len) {
        size_of::<u64>()
    } else {
        size_of::<[u64; 2]>()
    };
    let block = vectors.lanes * UNROLL;
    // A row shorter than a block is copied into one: the steps after see a block.
    let pad = vectors.simd && (2..=SMALL_K).contains(&k) && (vectors.lanes..block).contains(&len);
    let len = if pad { block } else { len };
    let may_bail = len / BAIL_MIN_RATIO >= k;
    Steps {
        pad,
        first_best: vectors.simd && k == 1 && len <= FIRST_BEST_MAX,
        collect_short: vectors.collect && len <= PREFIX,
        // K > 8 (up to a quarter of the collection's room) on rows too short for the guess: the bound
        // of the whole row's pieces. Rows that fit `whole_row` take it from K of a fifth of n on. Set by
        // rows of 1024 and 4096 f32 and f64 with K of 32 to 128 (`rows1024x1024_k512` at other K) and
        // rows of 256 and 512 f32 with K of 48 to 128 (`benches/sweep.py --set medium`).
        collect_pieces: vectors.collect
            && !capped
            && k > HALF_K
            && 4 * k * entry <= COLLECT_BYTES
            && !may_bail
            && (5 * k < len || len * entry > WHOLE_ROW_BYTES),
        // Short rows with K > 16 that no bound settled: the filter would pass most of their elements,
        // each through a mispredicted branch, and compact its buffer of 2K every K pushes. Set by rows
        // of 256 f32 with K of 32 to 100 (the `medium` set).
        whole_row: vectors.simd && k > SMALL_K && len > 2 * k && len * entry <= WHOLE_ROW_BYTES,
        // Not under a caller's cap: that is the K-th key of the sequence so far, which a guess from this
        // chunk's start would rarely beat.
        guess: vectors.simd && k >= GUESS_MIN_K && may_bail && !capped,
        may_bail,
        chunked: vectors.simd
            && bytes < 4
            && k >= CHUNKED_MIN_K
            && (len < SPARSE_RATIO.saturating_mul(k) || !engine.cpu.zen5),
        // Not on AMD CPUs, where the software prefetch slows float scans down (it speeds integer rows up
        // on every CPU, and every type elsewhere). Set by `llm32x128k_k50`, `llm32x128k_k50_f16` and
        // 4 x 1M f64 on a Zen 4.
        prefetch_floats: !engine.cpu.amd,
    }
}

/// 8- and 16-bit rows from [`bisect::MIN_LEN`] (a block of AVX-512's bytes) up to
/// [`BISECT_MAX_LEN`] are selected under their exact K-th key, from K above [`BISECT_MIN_K_8`] for
/// 8-bit keys and K of at least n / [`BISECT_RATIO_16`] for 16-bit ones (where counting and the filter
/// cross), up to n / 2; 8-bit rows up to [`bisect::MAX_LEN`] too, where they would be counted, with K up
/// to three quarters of the collection; 16-bit rows up to [`bisect::MAX_LEN_16`] from n /
/// [`BISECT_RATIO_16_LONG`], while what the K-th key leaves fits the collection. Above n / 2 the outputs
/// are most of the row, and counting it is faster; with K of 17 to 20, 8-bit rows do no better than with
/// the prefix bound; 16-bit rows with K below n / 6 keep the filter (f16 and bf16 rows cross near n / 7,
/// close enough to keep the integers' n / 6). Set by rows of 256 to 2048 u8, u16 and f16 with K from
/// 24 to 300 (`benches/sweep.py --set bytes` and `--set halves`).
const BISECT_MAX_LEN: usize = 512;
const BISECT_MIN_K_8: usize = 20;
const BISECT_RATIO_16: usize = 6;
const BISECT_RATIO_16_LONG: usize = 12;

/// Entries the collection after a bisection holds.
const COLLECTED: usize = COLLECT_BYTES / size_of::<u64>();

/// Whether a contiguous row of `len` elements of `data_type` with this K is one for `kernels::bisect`:
/// every type of 8 and 16 bits (integers; f16 and bf16, keyed first).
fn bisects(data_type: DataType, len: usize, k: usize) -> bool {
    let large_k = match data_type.size() {
        1 if len <= BISECT_MAX_LEN => k > BISECT_MIN_K_8,
        // Longer 8-bit rows where they would be counted, with K up to three quarters of the
        // collection's 512 entries (a quarter left for the K-th key's ties).
        1 => len <= bisect::MAX_LEN && counts(data_type, len, k, false) && 4 * k <= 3 * COLLECTED,
        2 if len <= BISECT_MAX_LEN => k.saturating_mul(BISECT_RATIO_16) >= len,
        // Longer 16-bit rows from n / 12, while what the K-th key leaves (K and a quarter for ties,
        // twice: the count's copy) fits the collection.
        2 => {
            len <= bisect::MAX_LEN_16
                && k.saturating_mul(BISECT_RATIO_16_LONG) >= len
                && 2 * (k + k / 4 + 32) <= COLLECTED
        }
        _ => false,
    };
    large_k && len >= bisect::MIN_LEN && 2 * k <= len
}

/// K at least `len / ratio` is counted rather than filtered: counting costs the same whatever K (two
/// passes for 8-bit keys, four for 16-bit ones), the filter grows with K. They cross near K = n/24 for
/// 8-bit keys and K = n/5 for 16-bit ones on AVX-512, whose compares test twice the lanes; n/10 for
/// 16-bit keys on the other engines, in rows longer than [`COUNT_SHORT_16`]. Set by 1M-element rows of
/// u8, u16 and f16 (`u8_1m_k100` at other K) and `benches/sweep.py --set halves`.
const COUNT_RATIO_8: usize = 24;
const COUNT_RATIO_16: usize = 5;
const COUNT_RATIO_16_NARROW: usize = 10;

/// 16-bit rows up to this long keep [`COUNT_RATIO_16`] on every engine: a count walks 256 buckets
/// twice, as much as such a row, and these rows' large K are bisected anyway, their smaller K filtered.
const COUNT_SHORT_16: usize = 512;

/// K that 8-bit keys need above `len / COUNT_RATIO_8` to be counted: a row's count walks all 256
/// buckets, as long as a short row itself, while the filter scans such keys 32 a compare from a prefix
/// bound that serves K up to 32. Set by rows of 256 and 1024 u8 with K of 16 to 85.
const COUNT_EXTRA_K_8: usize = 16;

/// Rows shorter than this are filtered: the counters' setup outweighs the row.
const COUNT_MIN_LEN: usize = 256;

/// 8-bit rows from this long with K of at least half of them are counted however short: what else takes
/// them sorts every element (`Method::All`), dearer than the counters' setup from here on (16-bit keys'
/// four passes are not). Set by u8 and i8 rows of 64 to 200 with K of n/2 to n.
const COUNT_MIN_LEN_HALF_K_8: usize = 128;

/// Whether counting is the faster way to select `k` of `len` elements of `data_type`, on an engine
/// whose vectors are 512 bits `wide` (AVX-512's: its filter keeps 16-bit keys longer).
fn counts(data_type: DataType, len: usize, k: usize, wide: bool) -> bool {
    let (ratio, extra) = match data_type.size() {
        1 => (COUNT_RATIO_8, COUNT_EXTRA_K_8),
        2 if wide || len <= COUNT_SHORT_16 => (COUNT_RATIO_16, 0),
        2 => (COUNT_RATIO_16_NARROW, 0),
        _ => return false,
    };
    // Counters are `u32`: longer rows are filtered.
    let short_8 = data_type.size() == 1 && len >= COUNT_MIN_LEN_HALF_K_8 && k.saturating_mul(2) >= len;
    let long_enough = len >= COUNT_MIN_LEN || short_8;
    long_enough && k.saturating_sub(extra).saturating_mul(ratio) >= len && len <= u32::MAX as usize
}

/// Contiguous chunks from this long are selected by the engine under an accumulator's K-th kept key
/// rather than offered block by block: shorter ones take the engine's short-row paths, which do not use
/// the key, and cost many times the offers. Set by 1M uniform f32, f16 and i32 in chunks of 1024 to
/// 64Ki with K of 8 and 100 (the `accumulated` group of `cargo bench --bench topk`).
const CAPPED_ENGINE_MIN: usize = 1024;

/// Whether an accumulator selects a chunk of `len` through the engine rather than offering each
/// element. Before its first compaction there is no K-th key to skip blocks against, and the engine's
/// own pools are faster once the chunk is 16 times K long (48 for K > 16: its first K · ln(n/K)
/// survivors each cost a branch out of its loop). Afterwards the engine scans under the K-th kept key,
/// from [`CAPPED_ENGINE_MIN`] elements on. A strided chunk would take the scalar engine, which never
/// catches up with the offers. Set by the `accumulated` group, K of 8 and 100.
pub(crate) fn chunk_through_engine(len: usize, k: usize, has_threshold: bool, contiguous: bool) -> bool {
    let ratio = if k <= SMALL_K { 16 } else { 48 };
    contiguous
        && if has_threshold {
            len >= CAPPED_ENGINE_MIN
        } else {
            len / ratio >= k
        }
}

/// Scratch words any request with rows of `len` takes: `min(len, 2k)` candidates of one word (two for
/// 64-bit keys or rows over 2^32 elements).
pub(crate) fn scratch_words<T: Element>(len: usize, k: usize) -> usize {
    let words = if packs_in_one_word(<T::Key as Key>::BITS, len) {
        1
    } else {
        2
    };
    // Saturating: huge `len` and `k` (possible with an empty tensor) must not overflow.
    candidates::capacity(len, k).saturating_mul(words)
}

/// Scratch words for the fastest path of a request along `axis` of `input`: [`scratch_words`], or
/// [`MAX_LANES`] times that where sequences are read side by side with a candidate buffer each
/// ([`column_buffers`]); 0 with nothing to select.
pub(crate) fn fastest_scratch_words<T: Element, const D: usize>(input: &Layout<D>, axis: usize, k: usize) -> usize {
    let Some(&len) = input.sizes().get(axis) else {
        return 0;
    };
    if k == 0 || input.elements() == 0 {
        return 0;
    }
    let least = scratch_words::<T>(len, k);
    if column_buffers(input, axis, k) {
        least.saturating_mul(MAX_LANES)
    } else {
        least
    }
}

/// The innermost dimension of `input` with more than one sequence, if sequences along `axis` can be read
/// side by side there: it is not the axis, and has stride 1.
pub(crate) fn columns_dimension<const D: usize>(input: &Layout<D>, axis: usize) -> Option<usize> {
    let inner = (0..D).rev().find(|&d| input.sizes()[d] > 1)?;
    (inner != axis && input.strides()[inner] == 1).then_some(inner)
}

/// Whether sequences along `axis` of `input` are read side by side with a candidate buffer each (K
/// above the lanes' sorted slots).
pub(crate) fn column_buffers<const D: usize>(input: &Layout<D>, axis: usize, k: usize) -> bool {
    SIMD_ENGINES && k > COLUMNS_MAX_K && columns_dimension(input, axis).is_some()
}

/// What the strategy knows of `engine`. Where no SIMD engine is compiled (firmware), the portable
/// engine's vectors are arrays of scalars: every engine takes the scalar engine's algorithms, which
/// execute fewer instructions there (BENCHMARKS.md, decisions), and the vector kernels stay out of
/// the flash.
pub(crate) fn capabilities(engine: Engine) -> Capabilities {
    let (v32, v64) = match engine {
        Engine::Scalar | Engine::Portable => vectors_of::<isa::Portable>(),
        #[cfg(simd_x86)]
        Engine::Avx2(_) => vectors_of::<isa::Avx2>(),
        #[cfg(simd_x86)]
        Engine::Avx512(_) => vectors_of::<isa::Avx512>(),
        #[cfg(simd_arm)]
        Engine::Neon(_) => vectors_of::<isa::Neon>(),
    };
    Capabilities {
        scalar: matches!(engine, Engine::Scalar) || !SIMD_ENGINES,
        v32,
        v64,
        wide: engine.wide(),
        cpu: crate::simd::cpu::facts(),
    }
}

/// The vectors an [`Isa`](crate::kernels::Isa)'s two lane widths are.
const fn vectors_of<I: crate::kernels::Isa>() -> (Vectors, Vectors) {
    use crate::kernels::candidates::Sorter;
    use crate::simd::vector::Vector;
    (
        Vectors::new(
            I::V32::LANES,
            I::V32::SPECIALIZE,
            I::Sorter::NETWORK || I::V32::COMPRESSES,
        ),
        Vectors::new(
            I::V64::LANES,
            I::V64::SPECIALIZE,
            I::Sorter::NETWORK || I::V64::COMPRESSES,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engines' capabilities as the decision tables assume them (`capabilities_are_the_engines`
    /// checks them against the engines this CPU has).
    const AVX2: Capabilities = simd(8, 4, true, false);
    const AVX512: Capabilities = simd(16, 8, true, true);
    const NEON: Capabilities = simd(4, 2, false, false);
    const PORTABLE: Capabilities = Capabilities {
        scalar: false,
        v32: Vectors::new(8, false, false),
        v64: Vectors::new(4, false, false),
        wide: false,
        cpu: INTEL,
    };
    const SCALAR: Capabilities = Capabilities {
        scalar: true,
        ..PORTABLE
    };
    const INTEL: Cpu = Cpu {
        amd: false,
        zen4: false,
        zen5: false,
    };
    const ZEN4: Cpu = Cpu {
        amd: true,
        zen4: true,
        zen5: false,
    };
    const ZEN5: Cpu = Cpu {
        amd: true,
        zen4: false,
        zen5: true,
    };

    const fn simd(lanes32: usize, lanes64: usize, collect: bool, wide: bool) -> Capabilities {
        Capabilities {
            scalar: false,
            v32: Vectors::new(lanes32, true, collect),
            v64: Vectors::new(lanes64, true, collect),
            wide,
            cpu: INTEL,
        }
    }

    fn on(cpu: Cpu, engine: Capabilities) -> Capabilities {
        Capabilities { cpu, ..engine }
    }

    fn rows(data_type: DataType, len: usize, k: usize) -> Rows {
        Rows {
            data_type,
            len,
            k,
            stride: 1,
            capped: false,
        }
    }

    fn filter(steps: Steps) -> RowPlan {
        RowPlan {
            ordered: false,
            bisect: false,
            gather: false,
            then: Row::Vectors(Method::Filter(steps)),
        }
    }

    fn plan(bisect: bool, then: Row) -> RowPlan {
        RowPlan {
            ordered: false,
            bisect,
            gather: false,
            then,
        }
    }

    /// The plan, after the check for a row in order (where SIMD engines are compiled).
    fn ordered(plan: RowPlan) -> RowPlan {
        RowPlan {
            ordered: SIMD_ENGINES,
            ..plan
        }
    }

    /// The steps of a SIMD row that takes none of the short-row paths (prefetching floats: not AMD).
    const PLAIN: Steps = Steps {
        pad: false,
        first_best: false,
        collect_short: false,
        collect_pieces: false,
        whole_row: false,
        guess: false,
        may_bail: false,
        chunked: false,
        prefetch_floats: true,
    };

    /// Which algorithm each kind of row gets: (engine, rows) -> plan.
    #[test]
    fn rows_decision_table() {
        use DataType::{Bf16, F16, F32, F64, I8, I16, I32, U8, U16};
        let strided = |r: Rows| Rows { stride: 4096, ..r };
        let capped = |r: Rows| Rows { capped: true, ..r };
        let all = Row::Vectors(Method::All);
        #[rustfmt::skip]
        let table: &[(&str, Capabilities, Rows, RowPlan)] = &[
            ("moe", AVX2, rows(F32, 256, 8), filter(Steps { collect_short: true, ..PLAIN })),
            ("moe, AVX-512", AVX512, rows(F32, 256, 8), filter(Steps { collect_short: true, ..PLAIN })),
            ("moe, NEON: nothing collected", NEON, rows(F32, 256, 8), filter(PLAIN)),
            ("moe, portable: the filter alone", PORTABLE, rows(F32, 256, 8), filter(PLAIN)),
            ("rows of 40: padded to a block", AVX512, rows(F32, 40, 2), filter(Steps { pad: true, collect_short: true, ..PLAIN })),
            ("K = 1 on 600: first_best", AVX2, rows(F32, 600, 1), filter(Steps { first_best: true, may_bail: true, ..PLAIN })),
            ("K = 1 on 4096: the filter's one pass", AVX2, rows(F32, 4096, 1), filter(Steps { may_bail: true, ..PLAIN })),
            ("1024, K = 32: the pieces' bound", AVX2, rows(F32, 1024, 32), ordered(filter(Steps { collect_pieces: true, ..PLAIN }))),
            ("256, K = 48: the pieces' bound, else whole", AVX2, rows(F32, 256, 48), filter(Steps { collect_short: true, collect_pieces: true, whole_row: true, ..PLAIN })),
            ("256 f64, K = 24: checked for order", AVX512, rows(F64, 256, 24), ordered(filter(Steps { collect_short: true, collect_pieces: true, whole_row: true, ..PLAIN }))),
            ("256 f64, K = 16: not checked", AVX512, rows(F64, 256, 16), filter(Steps { collect_short: true, collect_pieces: true, ..PLAIN })),
            ("K at least half the row", AVX2, rows(F32, 1024, 512), ordered(plan(false, all))),
            ("1M f32, K = 100: guessed", AVX2, rows(F32, 1_000_000, 100), filter(Steps { guess: true, may_bail: true, ..PLAIN })),
            ("1M f32, K = 5000: checked for order", AVX2, rows(F32, 1_000_000, 5000), ordered(filter(PLAIN))),
            ("1M f32, K = 8: the sorted pool", AVX2, rows(F32, 1_000_000, 8), filter(Steps { may_bail: true, ..PLAIN })),
            ("LLM f16: guessed, in chunks", AVX2, rows(F16, 128_256, 50), filter(Steps { guess: true, may_bail: true, chunked: true, ..PLAIN })),
            ("LLM f16 on Zen 5: sparse", on(ZEN5, AVX2), rows(F16, 128_256, 50), filter(Steps { guess: true, may_bail: true, prefetch_floats: false, ..PLAIN })),
            ("32k f16 on Zen 5: dense", on(ZEN5, AVX512), rows(F16, 32_768, 50), ordered(filter(Steps { guess: true, may_bail: true, chunked: true, prefetch_floats: false, ..PLAIN }))),
            ("1M f32, K = 1000: may bail out, checked", AVX2, rows(F32, 1_000_000, 1000), ordered(filter(Steps { guess: true, may_bail: true, ..PLAIN }))),
            ("1M f32, K = 300: not checked", AVX2, rows(F32, 1_000_000, 300), filter(Steps { guess: true, may_bail: true, ..PLAIN })),
            ("an accumulator's chunk: no guess", AVX2, capped(rows(F32, 65_536, 100)), filter(Steps { may_bail: true, ..PLAIN })),
            ("1M u8, K = 100", AVX2, rows(U8, 1_000_000, 100), filter(Steps { guess: true, may_bail: true, chunked: true, ..PLAIN })),
            ("1M u8, K = 50k: counted", AVX2, rows(U8, 1_000_000, 50_000), ordered(plan(false, Row::Count))),
            ("256 u8, K = 32: bisected, else counted", AVX2, rows(U8, 256, 32), plan(true, Row::Count)),
            ("256 u8, K = 32, portable: counted", PORTABLE, rows(U8, 256, 32), plan(false, Row::Count)),
            ("183 u8, K = 183: counted, not sorted", AVX2, rows(U8, 183, 183), ordered(plan(false, Row::Count))),
            ("128 i8, K = 64: bisected, else counted", AVX2, rows(I8, 128, 64), ordered(plan(true, Row::Count))),
            ("64 u8, K = 64: sorted", AVX2, rows(U8, 64, 64), ordered(plan(false, all))),
            ("183 u16, K = 183: sorted", AVX2, rows(U16, 183, 183), ordered(plan(false, all))),
            ("256 f16, K = 64: checked, bisected, else counted", AVX2, rows(F16, 256, 64), ordered(plan(true, Row::Count))),
            ("1024 bf16, K = 100: bisected, else filtered", AVX2, rows(Bf16, 1024, 100), ordered(plan(true, Row::Vectors(Method::Filter(Steps { collect_pieces: true, chunked: true, ..PLAIN }))))),
            ("1M i16, K = n/8: counted", AVX2, rows(I16, 1_000_000, 125_000), ordered(plan(false, Row::Count))),
            ("1M i16, K = n/8, AVX-512: filtered", AVX512, rows(I16, 1_000_000, 125_000), ordered(filter(Steps { chunked: true, ..PLAIN }))),
            ("strided rows", AVX2, strided(rows(F32, 4096, 8)), plan(false, Row::Scalar)),
            ("the scalar engine", SCALAR, rows(I32, 4096, 8), plan(false, Row::Scalar)),
            ("strided rows, K = 1: a running best", AVX2, strided(rows(F32, 4096, 1)), plan(false, Row::FirstBest)),
            ("the scalar engine, K = 1", SCALAR, rows(I32, 4096, 1), plan(false, Row::FirstBest)),
            ("rows of 8, K = 1: a running best", AVX2, rows(F32, 8, 1), plan(false, Row::FirstBest)),
            ("rows of 16, K = 1: the vectors", AVX2, rows(F32, 16, 1), filter(Steps { first_best: true, collect_short: true, prefetch_floats: true, ..PLAIN })),
            ("the scalar engine, K = 1 under a cap", SCALAR, capped(rows(F32, 4096, 1)), plan(false, Row::Scalar)),
            ("capped u8: nothing counted", AVX2, capped(rows(U8, 4096, 2048)), plan(false, all)),
        ];
        for (name, engine, rows, plan) in table {
            assert_eq!(row(engine, rows), *plan, "{name}");
        }
        // Strided rows up to GATHERED_MAX_LEN are copied and planned as contiguous ones.
        for (len, gathered) in [(100, true), (GATHERED_MAX_LEN, true), (GATHERED_MAX_LEN + 1, false)] {
            let plan = row(&AVX2, &strided(rows(F64, len, 16)));
            if SIMD_ENGINES && gathered {
                assert_eq!(
                    plan,
                    RowPlan {
                        gather: true,
                        ..row(&AVX2, &rows(F64, len, 16))
                    },
                    "{len}"
                );
            } else {
                assert_eq!(plan, super::tests::plan(false, Row::Scalar), "{len}");
            }
        }
        // Rows under ORDERED_MIN_LEN are checked for order from K = ORDERED_SHORT_MIN_K.
        // Rows with K at least half of them are checked from K = 2.
        let cases = [
            (256, 63, false),
            (256, 64, true),
            (100, 50, true),
            (1023, 17, false),
            (100, 49, false),
            (20, 10, true),
            (3, 2, true),
            (2, 1, false),
        ];
        for (len, k, checked) in cases {
            assert_eq!(
                row(&AVX2, &rows(DataType::F32, len, k)).ordered,
                SIMD_ENGINES && checked,
                "{len}, K = {k}"
            );
        }
    }

    /// How each kind of call walks its sequences: (engine, call) -> walk.
    #[test]
    fn walk_decision_table() {
        let call = |len: usize, k: usize, sequences: usize| Call {
            rows: rows(DataType::F32, len, k),
            sequences,
            columns: false,
            column_buffers: false,
        };
        let columns = |c: Call| Call { columns: true, ..c };
        let buffers = |c: Call| Call {
            column_buffers: true,
            ..c
        };
        let of = |data_type: DataType, c: Call| Call {
            rows: Rows { data_type, ..c.rows },
            ..c
        };
        let broadcast = |c: Call| Call {
            rows: Rows { stride: 0, ..c.rows },
            ..c
        };
        #[rustfmt::skip]
        let table: &[(&str, Option<Capabilities>, Call, Walk)] = &[
            ("the reference", None, call(256, 8, 4096), Walk::Reference),
            ("a broadcast axis", Some(AVX2), broadcast(call(1 << 30, 8, 1)), Walk::Broadcast),
            ("rows", Some(AVX2), call(256, 8, 4096), Walk::Rows),
            ("axis 0, K = 8", Some(AVX2), columns(call(4096, 8, 256)), Walk::Columns),
            ("axis 0, K = 50, a buffer a lane", Some(AVX2), buffers(columns(call(4096, 50, 256))), Walk::Columns),
            ("axis 0, K = 50, the least scratch", Some(AVX2), columns(call(4096, 50, 256)), Walk::Rows),
            ("axis 0, 183 u8, K = 183: counted a sequence at a time", Some(AVX2), buffers(columns(of(DataType::U8, call(183, 183, 659)))), Walk::Rows),
            ("axis 0, 790 i8, K = 790: a buffer a lane", Some(AVX2), buffers(columns(of(DataType::I8, call(790, 790, 4096)))), Walk::Columns),
            ("axis 0, 300 i16, K = 250: a buffer a lane", Some(AVX2), buffers(columns(of(DataType::I16, call(300, 250, 4096)))), Walk::Columns),
            ("axis 0, 100 i64, K = 8", Some(AVX2), columns(of(DataType::I64, call(100, 8, 4096))), Walk::Columns),
            ("axis 0, 100 i64, K = 9: gathered a row at a time", Some(AVX2), columns(of(DataType::I64, call(100, 9, 4096))), Walk::Rows),
            ("axis 0, 513 i64, K = 9: too long to gather", Some(AVX2), columns(of(DataType::I64, call(513, 9, 4096))), Walk::Columns),
            ("axis 0, portable", Some(PORTABLE), columns(call(4096, 8, 256)), Walk::Columns),
            ("axis 0, the scalar engine", Some(SCALAR), columns(call(4096, 8, 256)), Walk::Rows),
            ("rows of 8, K = 2", Some(AVX2), call(8, 2, 4096), Walk::Tiles),
            ("rows of 8, K = 1: first_best", Some(AVX2), call(8, 1, 4096), Walk::Rows),
            ("rows of 20, K = 1: first_best", Some(AVX2), call(20, 1, 4096), Walk::Rows),
            ("rows of 8 f16, K = 1", Some(AVX2), Call { rows: Rows { data_type: DataType::F16, ..call(8, 1, 4096).rows }, ..call(8, 1, 4096) }, Walk::Tiles),
            ("rows of 4 bf16, K = 1: first_best", Some(AVX2), Call { rows: Rows { data_type: DataType::Bf16, ..call(4, 1, 4096).rows }, ..call(4, 1, 4096) }, Walk::Rows),
            ("rows of 20, K = 1, portable", Some(PORTABLE), call(20, 1, 4096), Walk::Tiles),
            ("rows of 33: too long for a tile", Some(AVX2), call(33, 2, 4096), Walk::Rows),
            ("rows of 8, K = 17", Some(AVX2), call(8, 17, 4096), Walk::Rows),
            ("too few rows for a tile", Some(AVX2), call(8, 2, 15), Walk::Rows),
        ];
        for (name, engine, call, walk) in table {
            let want = if !SIMD_ENGINES && matches!(walk, Walk::Tiles | Walk::Columns) {
                Walk::Rows
            } else {
                *walk
            };
            assert_eq!(super::walk(engine.as_ref(), call), want, "{name}");
        }
    }

    /// `Auto` is the widest engine, but AVX2 for Zen 4's short rows; a backend named stands for itself.
    #[test]
    fn columns_decision_table() {
        use ColumnMethod::{FirstBest, Slots};
        #[rustfmt::skip]
        let table: &[(&str, usize, usize, ColumnMethod)] = &[
            ("axis of 2, K = 1", 1, 2, FirstBest),
            ("axis of 32, K = 1", 1, 32, FirstBest),
            ("axis of 33, K = 1: slots", 1, 33, Slots),
            ("axis of 4096, K = 1", 1, 4096, Slots),
            ("axis of 8, K = 2", 2, 8, Slots),
            ("axis of 256, K = 8", 8, 256, Slots),
        ];
        for (name, k, len, method) in table {
            assert_eq!(super::columns(*k, *len), *method, "{name}");
        }
    }

    #[test]
    fn backend_decision_table() {
        use Backend::{Auto, Avx2, Avx512, Portable};
        use DataType::{F32, F64};
        let moe = rows(F32, 256, 8);
        #[rustfmt::skip]
        let table = [
            ("moe on Zen 4", Auto, Avx512, moe, ZEN4, Avx2),
            ("moe elsewhere", Auto, Avx512, moe, INTEL, Avx512),
            ("K = 1", Auto, Avx512, rows(F32, 256, 1), ZEN4, Avx512),
            ("K = 17", Auto, Avx512, rows(F32, 256, 17), ZEN4, Avx512),
            ("rows of 200: not whole AVX2 blocks", Auto, Avx512, rows(F32, 200, 8), ZEN4, Avx512),
            ("f64", Auto, Avx512, rows(F64, 256, 8), ZEN4, Avx512),
            ("strided", Auto, Avx512, Rows { stride: 2, ..moe }, ZEN4, Avx512),
            ("a backend named", Portable, Avx512, moe, ZEN4, Portable),
            ("no AVX-512", Auto, Avx2, moe, ZEN4, Avx2),
        ];
        for (name, requested, widest, rows, cpu, want) in table {
            assert_eq!(backend(requested, widest, &rows, cpu), want, "{name}");
        }
    }

    /// The tables' engines are this CPU's: each engine it has has the capabilities they assume.
    #[test]
    fn capabilities_are_the_engines() {
        for name in Backend::ALL {
            let Some(engine) = Engine::new(name) else {
                continue;
            };
            let want = match name {
                Backend::Scalar => SCALAR,
                // Without SIMD engines, the portable engine's arrays take the scalar algorithms.
                Backend::Portable if !SIMD_ENGINES => Capabilities {
                    scalar: true,
                    ..PORTABLE
                },
                Backend::Portable => PORTABLE,
                Backend::Avx2 => AVX2,
                Backend::Avx512 => AVX512,
                Backend::Neon => NEON,
                _ => continue,
            };
            let got = capabilities(engine);
            assert_eq!(Capabilities { cpu: INTEL, ..got }, want, "{}", name.name());
        }
    }

    /// An accumulator's chunks go through the engine from 16 (48) times K before its first K-th key,
    /// from 1024 elements after, and never strided.
    #[test]
    fn chunks_decision_table() {
        for (len, k, threshold, contiguous, want) in [
            (128, 8, false, true, true),
            (127, 8, false, true, false),
            (4800, 100, false, true, true),
            (4799, 100, false, true, false),
            (1024, 100, true, true, true),
            (1023, 100, true, true, false),
            (1 << 20, 8, true, false, false),
        ] {
            assert_eq!(
                chunk_through_engine(len, k, threshold, contiguous),
                want,
                "{len} {k} {threshold}"
            );
        }
    }
}
