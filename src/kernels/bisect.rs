//! Short rows of 8- and 16-bit keys with a large K (the strategy's `bisects`): their exact K-th key by
//! bisection over the key's bits, each probe a count of the lanes below it ([`kth_by_bisection`]);
//! what is at or below it collected ([`collect_below`]) and counted into order. Counting the whole row
//! instead would keep 256 counters a row. f16 and bf16 rows the same, keyed into u16 on the stack
//! first ([`keyed_bisected`]).

use core::mem::size_of;

use crate::kernels::bound::kth_by_bisection;
use crate::kernels::candidates::Sorter;
use crate::kernels::collect::collect_below;
use crate::kernels::entry::Entry;
use crate::kernels::lanes::{FLOAT, KeyMap, SIGNED, UNSIGNED, in_8_bit_lanes, in_16_bit_lanes};
use crate::simd::vector::Vector;
use crate::types::element::{Element, Order, Sealed};
use crate::types::output::Emit;

/// The shortest row bisected (a block of AVX-512's bytes).
pub(crate) const MIN_LEN: usize = 64;
/// The longest 16-bit row bisected: its keys fit this many on the stack.
pub(crate) const MAX_LEN_16: usize = 1024;
/// The longest row bisected (8-bit keys).
pub(crate) const MAX_LEN: usize = 2048;

/// A row of 8- or 16-bit keys with a large K on `V`'s lanes of their width: its exact
/// K-th key by bisection ([`kth_by_bisection`]), everything at or below it collected
/// ([`collect_below`]) and ordered (8- and 16-bit keys counted into their order, see there). False,
/// having reported nothing, where the row is not one for it or `V` has no such lanes, the K-th key is
/// the largest (nothing to exclude), or its ties overflow the collection.
///
/// A kernel of its own (`dispatch::select`'s `SelectBisected`), not a step of the row filter: inlined
/// there, the bisection's code slows the filter's own short rows of these types.
#[inline(always)]
// The SIMD engines' alone: dead (with what only it calls) where none is compiled.
#[cfg_attr(not(simd), allow(dead_code))]
pub(crate) fn select_bisected<V: Vector, S: Sorter, T: Element, E: Entry>(
    row: &[T],
    k: usize,
    order: Order,
    emit: &mut Emit<'_, T>,
) -> bool {
    match <T as Sealed>::KEY_FORM {
        UNSIGNED => bisected::<V, S, T, E, UNSIGNED, T>(row, k, order, emit),
        SIGNED => bisected::<V, S, T, E, SIGNED, T>(row, k, order, emit),
        FLOAT if const { size_of::<T>() == 2 } => keyed_bisected::<V, S, T, E>(row, k, order, emit),
        _ => false,
    }
}

/// f16 and bf16 rows for [`bisected`]: their keys (`docs/CONTRACT.md` §2's order: -0 as +0, every NaN
/// above +inf and equal) written to 16-bit integers on the stack (2 KiB; the loop vectorises), which are
/// bisected as u16. Only positions come out, and the outputs read the row's own values: NaN payloads and
/// the sign of zero stay as they were. Their raw bits in 16-bit lanes would not do: the filter's lane
/// tests pass negative NaNs (see `lanes::half_limit`), where a bisection's counts must be exact.
#[inline(always)]
fn keyed_bisected<V: Vector, S: Sorter, T: Element, E: Entry>(
    row: &[T],
    k: usize,
    order: Order,
    emit: &mut Emit<'_, T>,
) -> bool {
    let mut keys = [0u16; MAX_LEN_16];
    let Some(keys) = keys.get_mut(..row.len()) else {
        return false;
    };
    for (key, &value) in keys.iter_mut().zip(row) {
        // T's key is 16 bits wide (the caller's `size_of` check).
        *key = Order::from_mask(0).key(value) as u16;
    }
    bisected::<V, S, u16, E, UNSIGNED, T>(keys, k, order, emit)
}

/// [`select_bisected`] on a row of keys of the form `FORM`, reporting to the outputs of `O` (T itself,
/// or the float type a row of u16 keys was made from).
#[inline(always)]
fn bisected<V: Vector, S: Sorter, T: Element, E: Entry, const FORM: u8, O: Element>(
    row: &[T],
    k: usize,
    order: Order,
    emit: &mut Emit<'_, O>,
) -> bool {
    // The strategy chose the row for this; its bounds on the row and K, checked again here where the
    // compiler sees them, take instructions off each row.
    if const { !(V::SPECIALIZE && (in_8_bit_lanes::<V, T, FORM>() || in_16_bit_lanes::<V, T, FORM>())) }
        || !(MIN_LEN..=MAX_LEN).contains(&row.len())
        || 2 * k > row.len()
    {
        return false;
    }
    let map = KeyMap::of::<T>();
    let kth = kth_by_bisection::<V, T, FORM>(row, k, order, &map);
    // Room for the gathered (K and a quarter more of the K-th key's ties; more are counted instead)
    // twice: the counting sort's copy (16-bit keys: its two passes; 8-bit ones too, faster than writing
    // straight to the outputs). No more: the slots are written before the collection (a network pads
    // with them), and writing 4 KiB for every short row would cost much of its time.
    let room = 2 * (k + k / 4 + 32).min(row.len());
    kth < map.ones && collect_below::<V, S, T, E, FORM, true, O>(row, k, order, &map, kth + 1, room, emit)
}
