// Top-K along one axis of a strided tensor: DirectML's DML_TOP_K1 on u32 words, bit-identical to the CPU
// crate (`docs/CONTRACT.md`). Baseline WGSL: no f16, no 64-bit integers; every value type is read as u32
// words.
//
// Idea:
//   key(x)   = the CPU crate's order-preserving key (src/types/element.rs) as (hi, lo) u32 words, bits flipped
//              for Decreasing, so "comes first" is "smaller (key, position)" in both directions.
//   entry    = (key hi, key lo, position): every entry is distinct, so any correct sort is stable.
//   tiny rows (n <= 32):     several rows per workgroup, each entry's rank counted (`tiny_rows`).
//   short rows (n <= TILE):  one workgroup per row: K <= 64, the candidates up to the K-th's top 16 key
//                            bits ranked by counting (`short_select`); else, or past 128 candidates, a
//                            bitonic sort in workgroup memory, emit K.
//   long rows, K <= TILE:    threshold filter on the top 11 key bits, candidates finished in one
//                            workgroup per row (`filter_*`, near the end of the file).
//   long rows, K > TILE:     radix select of the K-th key and of the last tie taken (`radix_*`), K
//                            candidates compacted, then sorted as below;
//   long rows, K near n:     a bitonic sort of the whole row (padded to a power of two) in global memory;
//                            the steps with a partner distance below TILE run fused in workgroup memory
//                            (`sort_tile` with stage_first = stage_last), the others one dispatch each.
//   emit     = copy the value's bits from the input (never from the key) and write the position.
//
// Tricks:
//   - Padding entries are all ones, above every real entry (positions stay below 2^32 - 1).
//   - Sub-word values (8/16-bit) are written with atomicAnd/atomicOr on their u32 word: two
//     invocations writing different bytes of one word never lose each other's bytes, and bytes of the
//     word outside the output view are left as they were.
//   - Addresses are i32 arithmetic that wraps; the host proved each final address lies in its buffer
//     of at most 2^32 - 1 bytes, so the wrapped result read as u32 is exact.
//   - Row and chunk counts above 65535 workgroups go in a 2D grid, linearized with num_workgroups.

// Invocations per workgroup. TILE / 2 must be a multiple of it for full occupancy, not for correctness.
override WORKGROUP: u32 = 256u;
// Entries sorted in workgroup memory: 3 words each, 12 KiB (WebGPU's default limit is 16 KiB).
const TILE: u32 = 1024u;
const NONE: u32 = 0xFFFFFFFFu;

// What a call is: mirrored by `Desc` in src/shader.rs.
struct Desc {
    // Dimensions other than the axis, outermost first (`outer_rank` of them): sizes and element strides.
    outer_sizes: array<vec4<u32>, 2>,
    input_outer: array<vec4<i32>, 2>,
    values_outer: array<vec4<i32>, 2>,
    indices_outer: array<vec4<i32>, 2>,
    outer_rank: u32,
    n: u32,
    k: u32,
    rows: u32,
    input_offset: i32,
    input_axis: i32,
    values_offset: i32,
    values_axis: i32,
    indices_offset: i32,
    indices_axis: i32,
    // 1, 2, 4 or 8.
    elem_bytes: u32,
    // 0 unsigned, 1 signed, 2 float.
    kind: u32,
    // Bits of +inf (the high word for f64): f16 0x7C00, bf16 0x7F80, f32 0x7F800000, f64 0x7FF00000.
    inf_hi: u32,
    // 1 for Decreasing: keys flipped.
    flip: u32,
    // 1 for u32/i32 indices, 2 for u64/i64.
    index_words: u32,
    pad0: u32,
}

// One dispatch of a call: mirrored by `Job` in src/shader.rs (bound at a dynamic offset).
struct Job {
    // Where entries come from: 0 the input (keys computed here), 1 `scratch`.
    source: u32,
    // Where sorted entries go: 0 all of them back to `scratch`, 1 the first K to the outputs.
    sink: u32,
    // Entries per chunk: a power of two, 2 to TILE.
    width: u32,
    // Chunks per row.
    chunks: u32,
    // Entries per row in `scratch` when reading.
    src_stride: u32,
    // Entries at chunk positions >= valid are padding.
    valid: u32,
    // Entries per row in `scratch` when writing.
    dst_stride: u32,
    // Bitonic stages (k = partner block size) run by `sort_tile`: stage_first, 2 stage_first, .. stage_last.
    stage_first: u32,
    stage_last: u32,
    // 1: sort direction by global position (a piece of a row-wide bitonic sort); 0: every chunk ascending.
    global_dir: u32,
    // `bitonic_step`: partner distance and stage.
    j: u32,
    stage: u32,
    // Radix select: 0 selects on keys, 1 on the positions of the keys equal to the K-th; digit shift.
    phase: u32,
    shift: u32,
    // `sort_tile`: 1 to zero the row's radix select state (the last step reading it is done).
    reset: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> desc: Desc;
@group(0) @binding(1) var<uniform> job: Job;
@group(0) @binding(2) var<storage, read> input_words: array<u32>;
// (key hi, key lo, position) entries, 3 words each.
@group(0) @binding(3) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(4) var<storage, read_write> values_words: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> indices_words: array<u32>;
// Per row: the radix select's 256 bins and state (see the STATE_* offsets), or the threshold filter's
// (FILTER_*). Zero before and after every call: the kernels clear what they used, so the buffer is
// reused across calls.
@group(0) @binding(6) var<storage, read_write> counters: array<atomic<u32>>;
// The radix select's position phase as indirect dispatch arguments: (x, y, 1) of its histogram grid,
// then of its select grid. All zero, so the phase is skipped, unless a row has ties at the K-th key
// that are not all taken; zeroed again by the last kernel of the call (`sort_tile` with `reset`).
@group(0) @binding(7) var<storage, read_write> dispatch_args: array<atomic<u32>, 6>;

const STATE: u32 = 264u;
// The K-th key found so far (its digits above the current one), high and low word.
const STATE_KEY_HI: u32 = 256u;
const STATE_KEY_LO: u32 = 257u;
// Elements whose key is below the digits found so far: all of them are among the first K.
const STATE_KEY_BELOW: u32 = 258u;
// Among the keys equal to the K-th: the position of the last one taken (its digits so far; NONE when
// all of them are taken, known after phase 0), and how many ties lie below those digits.
const STATE_POS: u32 = 259u;
const STATE_POS_BELOW: u32 = 260u;
// Candidates written by `radix_compact`.
const STATE_COUNT: u32 = 261u;

var<workgroup> bins: array<atomic<u32>, 256>;
// `radix_select`'s running sums of the bins.
var<workgroup> prefix: array<u32, 256>;

var<workgroup> tile_hi: array<u32, TILE>;
var<workgroup> tile_lo: array<u32, TILE>;
var<workgroup> tile_pos: array<u32, TILE>;

struct Bases {
    input: i32,
    values: i32,
    indices: i32,
}

// Element addresses of position 0 of sequence `row` (row-major over the non-axis dimensions).
fn row_bases(row: u32) -> Bases {
    var b = Bases(desc.input_offset, desc.values_offset, desc.indices_offset);
    var rest = row;
    for (var d = i32(desc.outer_rank) - 1; d >= 0; d--) {
        let q = u32(d) / 4u;
        let r = u32(d) % 4u;
        let size = max(desc.outer_sizes[q][r], 1u);
        let c = i32(rest % size);
        rest = rest / size;
        b.input += c * desc.input_outer[q][r];
        b.values += c * desc.values_outer[q][r];
        b.indices += c * desc.indices_outer[q][r];
    }
    return b;
}

// The raw bits of the input element at `address` (in elements): (low word, high word).
fn element_bits(address: i32) -> vec2<u32> {
    let a = u32(address);
    switch desc.elem_bytes {
        case 1u: {
            return vec2<u32>((input_words[a >> 2u] >> ((a & 3u) * 8u)) & 0xFFu, 0u);
        }
        case 2u: {
            return vec2<u32>((input_words[a >> 1u] >> ((a & 1u) * 16u)) & 0xFFFFu, 0u);
        }
        case 4u: {
            return vec2<u32>(input_words[a], 0u);
        }
        default: {
            return vec2<u32>(input_words[2u * a], input_words[2u * a + 1u]);
        }
    }
}

// The order-preserving key of raw bits (src/types/element.rs), flipped for Decreasing: (high, low) word.
fn key_of(bits: vec2<u32>) -> vec2<u32> {
    if desc.elem_bytes == 8u {
        var hi = bits.y;
        var lo = bits.x;
        if desc.kind == 1u {
            hi ^= 0x80000000u;
        } else if desc.kind == 2u {
            let magnitude = hi & 0x7FFFFFFFu;
            if magnitude > desc.inf_hi || (magnitude == desc.inf_hi && lo != 0u) {
                hi = NONE; // every NaN: above +inf, all equal
                lo = NONE;
            } else if magnitude == 0u && lo == 0u {
                hi = 0x80000000u; // -0 == +0
            } else if (hi & 0x80000000u) != 0u {
                hi = ~hi;
                lo = ~lo;
            } else {
                hi |= 0x80000000u;
            }
        }
        if desc.flip != 0u {
            hi = ~hi;
            lo = ~lo;
        }
        return vec2<u32>(hi, lo);
    }
    let width = desc.elem_bytes * 8u;
    // A shift by 32 would be taken mod 32, hence the select.
    let mask = select((1u << width) - 1u, NONE, width == 32u);
    let sign = 1u << (width - 1u);
    var key = bits.x;
    if desc.kind == 1u {
        key ^= sign;
    } else if desc.kind == 2u {
        let magnitude = key & (sign - 1u);
        if magnitude > desc.inf_hi {
            key = mask;
        } else if magnitude == 0u {
            key = sign;
        } else if (key & sign) != 0u {
            key = ~key & mask;
        } else {
            key |= sign;
        }
    }
    if desc.flip != 0u {
        key ^= mask;
    }
    return vec2<u32>(0u, key);
}

// Whether entry a comes before entry b: smaller key, then lower position.
fn before(a: vec3<u32>, b: vec3<u32>) -> bool {
    if a.x != b.x {
        return a.x < b.x;
    }
    if a.y != b.y {
        return a.y < b.y;
    }
    return a.z < b.z;
}

// Writes the element at `pos` of the row as output `rank`, and `pos` as its index.
fn emit(b: Bases, rank: u32, pos: u32) {
    let bits = element_bits(b.input + i32(pos) * desc.input_axis);
    let v = u32(b.values + i32(rank) * desc.values_axis);
    switch desc.elem_bytes {
        case 1u: {
            let shift = (v & 3u) * 8u;
            atomicAnd(&values_words[v >> 2u], ~(0xFFu << shift));
            atomicOr(&values_words[v >> 2u], bits.x << shift);
        }
        case 2u: {
            let shift = (v & 1u) * 16u;
            atomicAnd(&values_words[v >> 1u], ~(0xFFFFu << shift));
            atomicOr(&values_words[v >> 1u], bits.x << shift);
        }
        case 4u: {
            atomicStore(&values_words[v], bits.x);
        }
        default: {
            atomicStore(&values_words[2u * v], bits.x);
            atomicStore(&values_words[2u * v + 1u], bits.y);
        }
    }
    let i = u32(b.indices + i32(rank) * desc.indices_axis);
    if desc.index_words == 1u {
        indices_words[i] = pos;
    } else {
        indices_words[2u * i] = pos;
        indices_words[2u * i + 1u] = 0u;
    }
}

fn load_entry(row: u32, g: u32, b: Bases) -> vec3<u32> {
    if g >= job.valid {
        return vec3<u32>(NONE, NONE, NONE);
    }
    switch job.source {
        case 0u: {
            let key = key_of(element_bits(b.input + i32(g) * desc.input_axis));
            return vec3<u32>(key.x, key.y, g);
        }
        default: {
            let e = (row * job.src_stride + g) * 3u;
            return vec3<u32>(scratch[e], scratch[e + 1u], scratch[e + 2u]);
        }
    }
}

// One workgroup per (row, chunk): load a chunk, run bitonic stages in workgroup memory, store (see Job).
@compute @workgroup_size(WORKGROUP)
fn sort_tile(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let linear = wid.x + wid.y * groups.x;
    let width = job.width;
    let row = linear / job.chunks;
    let chunk = linear % job.chunks;
    if row >= desc.rows {
        return;
    }
    let b = row_bases(row);
    let base = chunk * width;
    for (var t = lid; t < width; t += WORKGROUP) {
        let e = load_entry(row, base + t, b);
        tile_hi[t] = e.x;
        tile_lo[t] = e.y;
        tile_pos[t] = e.z;
    }
    workgroupBarrier();
    if job.reset != 0u && chunk == 0u {
        for (var d = 256u + lid; d < STATE; d += WORKGROUP) {
            atomicStore(&counters[row * STATE + d], 0u);
        }
        if row == 0u && lid < 6u {
            atomicStore(&dispatch_args[lid], 0u);
        }
    }
    let dir_base = select(0u, base, job.global_dir != 0u);
    for (var k = job.stage_first; k <= job.stage_last; k <<= 1u) {
        for (var j = min(k >> 1u, width >> 1u); j > 0u; j >>= 1u) {
            for (var p = lid; p < width / 2u; p += WORKGROUP) {
                let i = 2u * p - (p & (j - 1u));
                let l = i + j;
                let ascending = ((dir_base + i) & k) == 0u;
                let a = vec3<u32>(tile_hi[i], tile_lo[i], tile_pos[i]);
                let c = vec3<u32>(tile_hi[l], tile_lo[l], tile_pos[l]);
                if select(before(a, c), before(c, a), ascending) {
                    tile_hi[i] = c.x;
                    tile_lo[i] = c.y;
                    tile_pos[i] = c.z;
                    tile_hi[l] = a.x;
                    tile_lo[l] = a.y;
                    tile_pos[l] = a.z;
                }
            }
            workgroupBarrier();
        }
    }
    switch job.sink {
        case 0u: {
            for (var t = lid; t < width; t += WORKGROUP) {
                let e = (row * job.dst_stride + base + t) * 3u;
                scratch[e] = tile_hi[t];
                scratch[e + 1u] = tile_lo[t];
                scratch[e + 2u] = tile_pos[t];
            }
        }
        default: {
            for (var t = lid; t < desc.k; t += WORKGROUP) {
                emit(b, t, tile_pos[t]);
            }
        }
    }
}

// One compare-exchange of a row-wide bitonic sort in `scratch` (rows of `dst_stride` entries, a power of two).
@compute @workgroup_size(WORKGROUP)
fn bitonic_step(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let id = (wid.x + wid.y * groups.x) * WORKGROUP + lid;
    let pairs = job.dst_stride / 2u;
    let row = id / pairs;
    if row >= desc.rows {
        return;
    }
    let p = id % pairs;
    let j = job.j;
    let i = 2u * p - (p & (j - 1u));
    let l = i + j;
    let ascending = (i & job.stage) == 0u;
    let ei = (row * job.dst_stride + i) * 3u;
    let el = (row * job.dst_stride + l) * 3u;
    let a = vec3<u32>(scratch[ei], scratch[ei + 1u], scratch[ei + 2u]);
    let c = vec3<u32>(scratch[el], scratch[el + 1u], scratch[el + 2u]);
    if select(before(a, c), before(c, a), ascending) {
        scratch[ei] = c.x;
        scratch[ei + 1u] = c.y;
        scratch[ei + 2u] = c.z;
        scratch[el] = a.x;
        scratch[el + 1u] = a.y;
        scratch[el + 2u] = a.z;
    }
}

// Emits the first K entries of each sorted row of `scratch` (rows of `dst_stride` entries).
@compute @workgroup_size(WORKGROUP)
fn write_sorted(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let id = (wid.x + wid.y * groups.x) * WORKGROUP + lid;
    let row = id / desc.k;
    if row >= desc.rows {
        return;
    }
    let rank = id % desc.k;
    emit(row_bases(row), rank, scratch[(row * job.dst_stride + rank) * 3u + 2u]);
}

// Radix select for long rows (n > TILE, K <= TILE). Per digit of 8 bits, from the top:
//   radix_histogram: count the digit of every element whose higher digits equal the K-th key's so far;
//   radix_select:    walk the 256 bins to the one holding the K-th, fix that digit, count the bins below.
// Phase 0 does this on keys and finds the K-th key T exactly; phase 1 does it on the positions of the
// elements with key T and finds the position of the last tie taken (ties go to the lowest positions).
// Phase 1's dispatches are indirect, with zero workgroups unless some row's ties at T are not all taken.
// radix_compact then writes exactly K candidates (key < T, or key == T at a position up to that one) in
// any order, and `sort_tile` sorts them and writes the outputs.

// Whether the bits of v at and above `from_bit` equal those of p ((hi, lo) pairs).
fn high_equal(v: vec2<u32>, p: vec2<u32>, from_bit: u32) -> bool {
    if from_bit >= 64u {
        return true;
    }
    if from_bit >= 32u {
        return (v.x >> (from_bit - 32u)) == (p.x >> (from_bit - 32u));
    }
    return v.x == p.x && (v.y >> from_bit) == (p.y >> from_bit);
}

fn digit_of(v: vec2<u32>, shift: u32) -> u32 {
    if shift >= 32u {
        return (v.x >> (shift - 32u)) & 0xFFu;
    }
    return (v.y >> shift) & 0xFFu;
}

// One workgroup per (row, chunk of `width` positions): a histogram in workgroup memory, added to the row's.
@compute @workgroup_size(WORKGROUP)
fn radix_histogram(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let linear = wid.x + wid.y * groups.x;
    let row = linear / job.chunks;
    let chunk = linear % job.chunks;
    if row >= desc.rows {
        return;
    }
    for (var d = lid; d < 256u; d += WORKGROUP) {
        atomicStore(&bins[d], 0u);
    }
    workgroupBarrier();
    let b = row_bases(row);
    let state = row * STATE;
    let kth = vec2<u32>(atomicLoad(&counters[state + STATE_KEY_HI]), atomicLoad(&counters[state + STATE_KEY_LO]));
    let last = vec2<u32>(0u, atomicLoad(&counters[state + STATE_POS]));
    let start = chunk * job.width;
    var end = min(start + job.width, desc.n);
    if job.phase == 1u && last.y == NONE {
        end = start;
    }
    for (var pos = start + lid; pos < end; pos += WORKGROUP) {
        let key = key_of(element_bits(b.input + i32(pos) * desc.input_axis));
        if job.phase == 0u {
            if high_equal(key, kth, job.shift + 8u) {
                atomicAdd(&bins[digit_of(key, job.shift)], 1u);
            }
        } else {
            let p = vec2<u32>(0u, pos);
            if all(key == kth) && high_equal(p, last, job.shift + 8u) {
                atomicAdd(&bins[digit_of(p, job.shift)], 1u);
            }
        }
    }
    workgroupBarrier();
    for (var d = lid; d < 256u; d += WORKGROUP) {
        let count = atomicLoad(&bins[d]);
        if count != 0u {
            atomicAdd(&counters[state + d], count);
        }
    }
}

// One workgroup per row: the bin holding the K-th, its digit fixed, the bins cleared for the next digit.
// The 256 bins are summed by a parallel prefix scan in workgroup memory: one invocation walking them
// through global atomics would be a chain of 256 dependent round trips to L2, most of a call's time.
@compute @workgroup_size(WORKGROUP)
fn radix_select(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let row = wid.x + wid.y * groups.x;
    if row >= desc.rows {
        return;
    }
    let state = row * STATE;
    for (var d = lid; d < 256u; d += WORKGROUP) {
        prefix[d] = atomicExchange(&counters[state + d], 0u);
    }
    workgroupBarrier();
    // Hillis-Steele: after the step at `offset`, prefix[d] sums the bins d - 2 offset + 1 ..= d.
    for (var offset = 1u; offset < 256u; offset <<= 1u) {
        // Each invocation holds at most 256 / 32 bins (WORKGROUP >= 32).
        var carry: array<u32, 8>;
        for (var i = 0u; lid + i * WORKGROUP < 256u; i++) {
            let d = lid + i * WORKGROUP;
            carry[i] = 0u;
            if d >= offset {
                carry[i] = prefix[d - offset];
            }
        }
        workgroupBarrier();
        for (var i = 0u; lid + i * WORKGROUP < 256u; i++) {
            prefix[lid + i * WORKGROUP] += carry[i];
        }
        workgroupBarrier();
    }
    // 1-based rank of the wanted element among those still in the running.
    var rank = desc.k - atomicLoad(&counters[state + STATE_KEY_BELOW]);
    let all_ties = atomicLoad(&counters[state + STATE_POS]) == NONE;
    if job.phase == 1u {
        if all_ties {
            return;
        }
        rank -= atomicLoad(&counters[state + STATE_POS_BELOW]);
    }
    for (var d = lid; d < 256u; d += WORKGROUP) {
        var below = 0u;
        if d > 0u {
            below = prefix[d - 1u];
        }
        var digit = d;
        if below >= rank || prefix[d] < rank {
            // Not this bin; the last one answers if no bin holds the rank (never for a valid state).
            if d != 255u || prefix[d] >= rank {
                continue;
            }
            below = prefix[d];
            digit = 0u;
        }
        if job.phase == 0u {
            atomicAdd(&counters[state + STATE_KEY_BELOW], below);
            if job.shift >= 32u {
                atomicOr(&counters[state + STATE_KEY_HI], digit << (job.shift - 32u));
            } else {
                atomicOr(&counters[state + STATE_KEY_LO], digit << job.shift);
            }
            // The K-th key is known: if every element equal to it is taken, phase 1 has nothing to find;
            // else phase 1 is dispatched (`j`, `stage`: its histogram grid; `stage_first`, `stage_last`:
            // its select grid).
            if job.shift == 0u {
                if rank - below == prefix[d] - below {
                    atomicStore(&counters[state + STATE_POS], NONE);
                } else {
                    atomicStore(&dispatch_args[0], job.j);
                    atomicStore(&dispatch_args[1], job.stage);
                    atomicStore(&dispatch_args[2], 1u);
                    atomicStore(&dispatch_args[3], job.stage_first);
                    atomicStore(&dispatch_args[4], job.stage_last);
                    atomicStore(&dispatch_args[5], 1u);
                }
            }
        } else {
            atomicAdd(&counters[state + STATE_POS_BELOW], below);
            atomicOr(&counters[state + STATE_POS], digit << job.shift);
        }
    }
}

// One invocation per element: the K candidates of each row, in any order, into `scratch` (rows of
// `dst_stride` entries; the rest of a row is left for `sort_tile` to pad).
@compute @workgroup_size(WORKGROUP)
fn radix_compact(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let id = (wid.x + wid.y * groups.x) * WORKGROUP + lid;
    let row = id / desc.n;
    if row >= desc.rows {
        return;
    }
    let pos = id % desc.n;
    let state = row * STATE;
    let kth = vec2<u32>(atomicLoad(&counters[state + STATE_KEY_HI]), atomicLoad(&counters[state + STATE_KEY_LO]));
    let last = atomicLoad(&counters[state + STATE_POS]);
    let key = key_of(element_bits(row_bases(row).input + i32(pos) * desc.input_axis));
    let less = key.x < kth.x || (key.x == kth.x && key.y < kth.y);
    if less || (all(key == kth) && pos <= last) {
        let slot = atomicAdd(&counters[state + STATE_COUNT], 1u);
        // Exactly K elements qualify; the bound only guards the buffer.
        if slot < desc.k {
            let e = (row * job.dst_stride + slot) * 3u;
            scratch[e] = key.x;
            scratch[e + 1u] = key.y;
            scratch[e + 2u] = pos;
        }
    }
}

// Threshold filter for long rows (n > TILE, K <= TILE), four dispatches in all:
//   filter_histogram:  per (row, chunk), a histogram of the key's top 11 bits (its wide digit) in
//                      workgroup memory, added to the row's 2048 bins;
//   filter_pick:       per row, the bucket B holding the K-th key (bins cleared);
//   filter_candidates: per element, (key, position) written to the row's candidate list when the wide
//                      digit is at most B: every element of the first K is there, and the others sort
//                      after them; the count goes on past the list's capacity (`dst_stride`);
//   filter_finish:     per row, one workgroup: up to TILE candidates are sorted whole in workgroup
//                      memory; more go through an exact radix select of the K-th (key, position), 8
//                      bits a round over the list in workgroup histograms, and the K entries at or
//                      below it are gathered and sorted. If the list overflowed (skewed or equal data),
//                      the same select runs over the whole row read from the input.

const WIDE_DIGITS: u32 = 2048u;
// Per row: the 2048 bins, then the bucket and the candidate count.
const FILTER_STATE: u32 = 2052u;
const FILTER_BUCKET: u32 = 2048u;
const FILTER_COUNT: u32 = 2049u;

var<workgroup> wide_bins: array<atomic<u32>, WIDE_DIGITS>;
var<workgroup> wide_hist: array<u32, WIDE_DIGITS>;
// Per invocation of `filter_pick`: the sum of its segment of bins (WORKGROUP <= 512).
var<workgroup> wide_part: array<u32, 512>;

// `filter_finish`'s select: the fixed bits of the K-th (key hi, key lo, position), which bits those are,
// the rank still wanted among the entries matching them, whether every such entry is taken, how many
// entries the source holds, whether it is the input, and the entries gathered.
var<workgroup> sel_prefix: vec3<u32>;
var<workgroup> sel_mask: vec3<u32>;
var<workgroup> sel_rank: u32;
var<workgroup> sel_done: u32;
var<workgroup> sel_count: u32;
var<workgroup> sel_input: u32;
var<workgroup> sel_taken: atomic<u32>;
var<workgroup> sel_width: u32;

// The top 11 bits of a key of the value type's width (8-bit keys shifted up).
fn wide_digit(key: vec2<u32>) -> u32 {
    let width = desc.elem_bytes * 8u;
    if width == 64u {
        return key.x >> 21u;
    }
    if width >= 11u {
        return key.y >> (width - 11u);
    }
    return key.y << (11u - width);
}

@compute @workgroup_size(WORKGROUP)
fn filter_histogram(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let linear = wid.x + wid.y * groups.x;
    let row = linear / job.chunks;
    let chunk = linear % job.chunks;
    if row >= desc.rows {
        return;
    }
    for (var d = lid; d < WIDE_DIGITS; d += WORKGROUP) {
        atomicStore(&wide_bins[d], 0u);
    }
    workgroupBarrier();
    let b = row_bases(row);
    let start = chunk * job.width;
    let end = min(start + job.width, desc.n);
    for (var pos = start + lid; pos < end; pos += WORKGROUP) {
        let key = key_of(element_bits(b.input + i32(pos) * desc.input_axis));
        atomicAdd(&wide_bins[wide_digit(key)], 1u);
    }
    workgroupBarrier();
    let state = row * FILTER_STATE;
    for (var d = lid; d < WIDE_DIGITS; d += WORKGROUP) {
        let count = atomicLoad(&wide_bins[d]);
        if count != 0u {
            atomicAdd(&counters[state + d], count);
        }
    }
}

@compute @workgroup_size(WORKGROUP)
fn filter_pick(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let row = wid.x + wid.y * groups.x;
    if row >= desc.rows {
        return;
    }
    let state = row * FILTER_STATE;
    for (var d = lid; d < WIDE_DIGITS; d += WORKGROUP) {
        wide_hist[d] = atomicExchange(&counters[state + d], 0u);
    }
    workgroupBarrier();
    let segment = WIDE_DIGITS / WORKGROUP;
    var sum = 0u;
    for (var i = 0u; i < segment; i++) {
        sum += wide_hist[lid * segment + i];
    }
    wide_part[lid] = sum;
    workgroupBarrier();
    if lid == 0u {
        // The bins sum to n >= K, so the walk stops at the bin holding the K-th.
        var rank = desc.k;
        var s = 0u;
        while s + 1u < WORKGROUP && wide_part[s] < rank {
            rank -= wide_part[s];
            s++;
        }
        var d = s * segment;
        while d + 1u < (s + 1u) * segment && wide_hist[d] < rank {
            rank -= wide_hist[d];
            d++;
        }
        atomicStore(&counters[state + FILTER_BUCKET], d);
    }
}

// One invocation per element.
@compute @workgroup_size(WORKGROUP)
fn filter_candidates(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let id = (wid.x + wid.y * groups.x) * WORKGROUP + lid;
    let row = id / desc.n;
    if row >= desc.rows {
        return;
    }
    let pos = id % desc.n;
    let state = row * FILTER_STATE;
    let bucket = atomicLoad(&counters[state + FILTER_BUCKET]);
    let key = key_of(element_bits(row_bases(row).input + i32(pos) * desc.input_axis));
    if wide_digit(key) <= bucket {
        let slot = atomicAdd(&counters[state + FILTER_COUNT], 1u);
        if slot < job.dst_stride {
            let e = (row * job.dst_stride + slot) * 3u;
            scratch[e] = key.x;
            scratch[e + 1u] = key.y;
            scratch[e + 2u] = pos;
        }
    }
}

// Entry i of `filter_finish`'s source: the candidate list, or the row itself.
fn finish_entry(row: u32, i: u32, b: Bases, from_input: bool) -> vec3<u32> {
    if from_input {
        let key = key_of(element_bits(b.input + i32(i) * desc.input_axis));
        return vec3<u32>(key.x, key.y, i);
    }
    let e = (row * job.dst_stride + i) * 3u;
    return vec3<u32>(scratch[e], scratch[e + 1u], scratch[e + 2u]);
}

@compute @workgroup_size(WORKGROUP)
fn filter_finish(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let row = wid.x + wid.y * groups.x;
    if row >= desc.rows {
        return;
    }
    let b = row_bases(row);
    if lid == 0u {
        let found = atomicLoad(&counters[row * FILTER_STATE + FILTER_COUNT]);
        // The last reads of the row's state: leave it zero for the next call.
        atomicStore(&counters[row * FILTER_STATE + FILTER_COUNT], 0u);
        atomicStore(&counters[row * FILTER_STATE + FILTER_BUCKET], 0u);
        let overflow = found > job.dst_stride;
        sel_input = select(0u, 1u, overflow);
        sel_count = select(found, desc.n, overflow);
        sel_prefix = vec3<u32>(0u);
        sel_mask = vec3<u32>(0u);
        sel_rank = desc.k;
        // Up to TILE candidates: all of them are taken and sorted.
        sel_done = select(0u, 1u, !overflow && found <= TILE);
        atomicStore(&sel_taken, 0u);
    }
    let count = workgroupUniformLoad(&sel_count);
    let from_input = workgroupUniformLoad(&sel_input) != 0u;
    let pos_bits = 32u - countLeadingZeros(desc.n - 1u);
    // Fields of the entry from the top: key hi (64-bit types only), key lo, position.
    let first = select(1u, 0u, desc.elem_bytes == 8u);
    for (var field = first; field < 3u; field++) {
        var bits = min(desc.elem_bytes * 8u, 32u);
        if field == 2u {
            bits = pos_bits;
        }
        var shift = (bits - 1u) / 8u * 8u;
        loop {
            if workgroupUniformLoad(&sel_done) != 0u {
                break;
            }
            for (var d = lid; d < 256u; d += WORKGROUP) {
                atomicStore(&bins[d], 0u);
            }
            workgroupBarrier();
            let p = sel_prefix;
            let m = sel_mask;
            for (var i = lid; i < count; i += WORKGROUP) {
                let v = finish_entry(row, i, b, from_input);
                if all((v & m) == p) {
                    atomicAdd(&bins[(v[field] >> shift) & 0xFFu], 1u);
                }
            }
            workgroupBarrier();
            // The bin holding the rank: sums of 16 bins first, then the bins of one sum (the entries
            // matching the prefix number at least the rank, so both walks stop inside).
            if lid < 16u {
                var sum = 0u;
                for (var i = 0u; i < 16u; i++) {
                    sum += atomicLoad(&bins[lid * 16u + i]);
                }
                short_part[lid] = sum;
            }
            workgroupBarrier();
            if lid == 0u {
                var rank = sel_rank;
                var s = 0u;
                while s < 15u && short_part[s] < rank {
                    rank -= short_part[s];
                    s++;
                }
                var d = s * 16u;
                while d < s * 16u + 15u && atomicLoad(&bins[d]) < rank {
                    rank -= atomicLoad(&bins[d]);
                    d++;
                }
                var prefix = sel_prefix;
                var mask = sel_mask;
                prefix[field] |= d << shift;
                mask[field] |= 0xFFu << shift;
                sel_prefix = prefix;
                sel_mask = mask;
                sel_rank = rank;
                // Every entry with these bits is taken: the select is over.
                if atomicLoad(&bins[d]) == rank {
                    sel_done = 1u;
                }
            }
            if shift == 0u {
                break;
            }
            shift -= 8u;
        }
    }
    workgroupBarrier();
    // Exactly K entries lie at or below the prefix (all `count` when it is empty).
    let p = sel_prefix;
    let m = sel_mask;
    for (var i = lid; i < count; i += WORKGROUP) {
        let v = finish_entry(row, i, b, from_input);
        if !before(p, v & m) {
            let slot = atomicAdd(&sel_taken, 1u);
            if slot < TILE {
                tile_hi[slot] = v.x;
                tile_lo[slot] = v.y;
                tile_pos[slot] = v.z;
            }
        }
    }
    workgroupBarrier();
    if lid == 0u {
        sel_width = min(atomicLoad(&sel_taken), TILE);
    }
    let taken = workgroupUniformLoad(&sel_width);
    var width = 2u;
    while width < taken {
        width <<= 1u;
    }
    for (var t = taken + lid; t < width; t += WORKGROUP) {
        tile_hi[t] = NONE;
        tile_lo[t] = NONE;
        tile_pos[t] = NONE;
    }
    workgroupBarrier();
    sort_and_emit(lid, b, width);
}

// Bitonic-sorts the first `width` entries of the tile (a power of two, 2 to TILE, padded by the caller)
// ascending and writes the first K as outputs. Called in uniform control flow after a barrier.
fn sort_and_emit(lid: u32, b: Bases, width: u32) {
    for (var k = 2u; k <= width; k <<= 1u) {
        for (var j = k >> 1u; j > 0u; j >>= 1u) {
            for (var q = lid; q < width / 2u; q += WORKGROUP) {
                let i = 2u * q - (q & (j - 1u));
                let l = i + j;
                let a = vec3<u32>(tile_hi[i], tile_lo[i], tile_pos[i]);
                let c = vec3<u32>(tile_hi[l], tile_lo[l], tile_pos[l]);
                if select(before(a, c), before(c, a), (i & k) == 0u) {
                    tile_hi[i] = c.x;
                    tile_lo[i] = c.y;
                    tile_pos[i] = c.z;
                    tile_hi[l] = a.x;
                    tile_lo[l] = a.y;
                    tile_pos[l] = a.z;
                }
            }
            workgroupBarrier();
        }
    }
    for (var t = lid; t < desc.k; t += WORKGROUP) {
        emit(b, t, tile_pos[t]);
    }
}

// Short rows with small K (n <= TILE, K <= SHORT_CANDIDATES / 2), one workgroup per row: the row's
// entries in workgroup memory; the K-th's top 16 key bits B found by two rounds of 8-bit histograms;
// the entries whose top 16 bits are at most B (every one of the first K, and all others rank after
// them) gathered, and each one's rank among them counted: ranks below K are written, with no sort.
// When more than SHORT_CANDIDATES entries lie at or below B (ties, skewed data), the whole row is
// bitonic-sorted instead.
const SHORT_CANDIDATES: u32 = 128u;
var<workgroup> cand_hi: array<u32, SHORT_CANDIDATES>;
var<workgroup> cand_lo: array<u32, SHORT_CANDIDATES>;
var<workgroup> cand_pos: array<u32, SHORT_CANDIDATES>;
var<workgroup> short_part: array<u32, 16>;

// The top 16 bits of a key of the value type's width (8-bit keys shifted up).
fn top16(key: vec2<u32>) -> u32 {
    let width = desc.elem_bytes * 8u;
    if width == 64u {
        return key.x >> 16u;
    }
    if width == 8u {
        return key.y << 8u;
    }
    return key.y >> (width - 16u);
}

// One round of `short_select`: the histogram of the 8 bits of `top16` below `shift` over the tile's
// entries whose bits above them equal `high`, and the bin holding the `rank`-th of them. Returns (bin,
// entries in the bins below it, entries in it). Called in uniform control flow after a barrier.
fn short_round(lid: u32, n: u32, shift: u32, high: u32, rank: u32) -> vec3<u32> {
    for (var d = lid; d < 256u; d += WORKGROUP) {
        atomicStore(&bins[d], 0u);
    }
    workgroupBarrier();
    for (var t = lid; t < n; t += WORKGROUP) {
        let digits = top16(vec2<u32>(tile_hi[t], tile_lo[t]));
        if (digits >> (shift + 8u)) == high {
            atomicAdd(&bins[(digits >> shift) & 0xFFu], 1u);
        }
    }
    workgroupBarrier();
    if lid < 16u {
        var sum = 0u;
        for (var i = 0u; i < 16u; i++) {
            sum += atomicLoad(&bins[lid * 16u + i]);
        }
        short_part[lid] = sum;
    }
    workgroupBarrier();
    if lid == 0u {
        // The entries counted number at least `rank`, so the walk stops at the bin holding it.
        var left = rank;
        var below = 0u;
        var s = 0u;
        while s < 15u && short_part[s] < left {
            left -= short_part[s];
            below += short_part[s];
            s++;
        }
        var d = s * 16u;
        while d < s * 16u + 15u && atomicLoad(&bins[d]) < left {
            left -= atomicLoad(&bins[d]);
            below += atomicLoad(&bins[d]);
            d++;
        }
        sel_prefix = vec3<u32>(d, below, atomicLoad(&bins[d]));
    }
    return workgroupUniformLoad(&sel_prefix);
}

@compute @workgroup_size(WORKGROUP)
fn short_select(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let row = wid.x + wid.y * groups.x;
    if row >= desc.rows {
        return;
    }
    let b = row_bases(row);
    let n = desc.n;
    for (var t = lid; t < n; t += WORKGROUP) {
        let key = key_of(element_bits(b.input + i32(t) * desc.input_axis));
        tile_hi[t] = key.x;
        tile_lo[t] = key.y;
        tile_pos[t] = t;
    }
    if lid == 0u {
        atomicStore(&sel_taken, 0u);
    }
    workgroupBarrier();
    // The K-th's top 8 bits, then its next 8 among the entries sharing those.
    let first = short_round(lid, n, 8u, 0u, desc.k);
    let second = short_round(lid, n, 0u, first.x, desc.k - first.y);
    if lid == 0u {
        sel_count = first.y + second.y + second.z;
        sel_rank = (first.x << 8u) | second.x;
    }
    let count = workgroupUniformLoad(&sel_count);
    let bucket = sel_rank;
    if count <= SHORT_CANDIDATES {
        for (var t = lid; t < n; t += WORKGROUP) {
            let e = vec3<u32>(tile_hi[t], tile_lo[t], tile_pos[t]);
            if top16(e.xy) <= bucket {
                let slot = atomicAdd(&sel_taken, 1u);
                cand_hi[slot] = e.x;
                cand_lo[slot] = e.y;
                cand_pos[slot] = e.z;
            }
        }
        workgroupBarrier();
        for (var c = lid; c < count; c += WORKGROUP) {
            let e = vec3<u32>(cand_hi[c], cand_lo[c], cand_pos[c]);
            var rank = 0u;
            for (var j = 0u; j < count; j++) {
                if before(vec3<u32>(cand_hi[j], cand_lo[j], cand_pos[j]), e) {
                    rank++;
                }
            }
            if rank < desc.k {
                emit(b, rank, e.z);
            }
        }
        return;
    }
    var width = 2u;
    while width < n {
        width <<= 1u;
    }
    for (var t = n + lid; t < width; t += WORKGROUP) {
        tile_hi[t] = NONE;
        tile_lo[t] = NONE;
        tile_pos[t] = NONE;
    }
    workgroupBarrier();
    sort_and_emit(lid, b, width);
}

// Tiny rows (n <= TINY_ROW): WORKGROUP / n rows per workgroup, one invocation per element. Each entry's
// rank in its row is counted against the row's others in workgroup memory (entries are distinct, so the
// ranks are too); ranks below K are written.
@compute @workgroup_size(WORKGROUP)
fn tiny_rows(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let per_group = WORKGROUP / desc.n;
    let slot = lid / desc.n;
    let pos = lid % desc.n;
    let row = (wid.x + wid.y * groups.x) * per_group + slot;
    let live = slot < per_group && row < desc.rows;
    var b = Bases(0, 0, 0);
    if live {
        b = row_bases(row);
        let key = key_of(element_bits(b.input + i32(pos) * desc.input_axis));
        tile_hi[lid] = key.x;
        tile_lo[lid] = key.y;
        tile_pos[lid] = pos;
    }
    workgroupBarrier();
    if live {
        let e = vec3<u32>(tile_hi[lid], tile_lo[lid], pos);
        let first = slot * desc.n;
        var rank = 0u;
        for (var j = first; j < first + desc.n; j++) {
            if before(vec3<u32>(tile_hi[j], tile_lo[j], tile_pos[j]), e) {
                rank++;
            }
        }
        if rank < desc.k {
            emit(b, rank, pos);
        }
    }
}
