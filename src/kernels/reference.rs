//! The reference engine: the first K by definition, one pass over the sequence for each rank, O(n·K). It
//! pins the semantics (the order of `docs/CONTRACT.md` §2, ties by position) that every other engine is
//! compared with, bit for bit; [`crate::api::naive::topk`] runs it behind the same validation as every call.

use crate::types::element::{Element, Order};
use crate::types::output::Emit;
use crate::types::sequence::Sequence;

/// Reports, through `emit` ([`Emit`]), the first `k` positions of `seq` in the order of `flip`.
pub(crate) fn select<T: Element>(seq: &Sequence<'_, T>, k: usize, order: Order, emit: &mut Emit<'_, T>) {
    let mut previous: Option<(u64, usize)> = None;
    for rank in 0..k {
        let mut best: Option<(u64, usize)> = None;
        for position in 0..seq.len() {
            // SAFETY: position < seq.len().
            let candidate = (order.key(unsafe { seq.get(position) }), position);
            let after_previous = previous.is_none_or(|p| candidate > p);
            if after_previous && best.is_none_or(|b| candidate < b) {
                best = Some(candidate);
            }
        }
        let Some(chosen) = best else { return }; // unreachable while k <= len
        emit.one(rank, chosen.1);
        previous = Some(chosen);
    }
}
