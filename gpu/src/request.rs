//! A validated request and its plan: the uniform block describing the call, and the dispatches that run
//! it.

use bytemuck::Zeroable;
use topk_kernels::{DataType, Direction, Error, IndexType, Layout, MAX_RANK, Operand, check_request};

use crate::error::GpuError;
use crate::shader::{
    Desc, ENTRY_BYTES, FILTER_CHUNK, FILTER_STATE_WORDS, Job, Kernel, RADIX_CHUNK, RADIX_STATE_WORDS, SHORT_CANDIDATES,
    TILE, TINY_ROW,
};

/// A tensor's layout padded to rank 8 (leading size-1 dimensions), in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Strided {
    pub(crate) sizes: [usize; MAX_RANK],
    pub(crate) strides: [isize; MAX_RANK],
    pub(crate) offset: usize,
}

impl Strided {
    pub(crate) fn of<const D: usize>(layout: &Layout<D>) -> Strided {
        let mut s = Strided {
            sizes: [1; MAX_RANK],
            strides: [0; MAX_RANK],
            offset: layout.offset(),
        };
        s.sizes[MAX_RANK - D..].copy_from_slice(&layout.sizes());
        s.strides[MAX_RANK - D..].copy_from_slice(&layout.strides());
        s
    }

    /// Checks that every address lies in a buffer of `elements` elements.
    pub(crate) fn check_fits(&self, tensor: Operand, elements: usize) -> Result<(), Error> {
        Layout::new(tensor, self.sizes, self.strides, self.offset, elements).map(|_| ())
    }
}

/// A validated request, independent of where its tensors live: what [`TopKGpu::record`](crate::TopKGpu::record) runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub(crate) dtype: DataType,
    pub(crate) index: IndexType,
    pub(crate) input: Strided,
    pub(crate) values: Strided,
    pub(crate) indices: Strided,
    /// The axis in the padded rank-8 numbering.
    pub(crate) axis: usize,
    pub(crate) k: usize,
    pub(crate) direction: Direction,
}

impl Request {
    /// Validates a request with the CPU crate's own checks ([`check_request`], `docs/CONTRACT.md` §5),
    /// given the layouts of the three tensors (each validated against its own buffer's length by
    /// `Layout::new`), and that neither output aliases itself.
    #[allow(clippy::too_many_arguments)] // the operator's parameters, as in the CPU crate
    pub fn new<const D: usize>(
        dtype: DataType,
        index: IndexType,
        input: &Layout<D>,
        axis: usize,
        k: usize,
        direction: Direction,
        values: &Layout<D>,
        indices: &Layout<D>,
    ) -> Result<Request, GpuError> {
        let axis = check_request(
            input,
            isize::try_from(axis).unwrap_or(isize::MAX),
            k,
            values,
            indices,
            index.max_position(),
        )?;
        values.check_unaliased(Operand::Values)?;
        indices.check_unaliased(Operand::Indices)?;
        Ok(Request {
            dtype,
            index,
            input: Strided::of(input),
            values: Strided::of(values),
            indices: Strided::of(indices),
            axis: axis + MAX_RANK - D,
            k,
            direction,
        })
    }

    /// The length of each sequence.
    pub fn sequence_len(&self) -> usize {
        self.input.sizes[self.axis]
    }

    /// The number of sequences with work to do (0 when K is 0 or the tensor is empty).
    pub fn sequences(&self) -> usize {
        let elements: usize = self.input.sizes.iter().product();
        if self.k == 0 || elements == 0 {
            0
        } else {
            elements / self.sequence_len()
        }
    }

    /// K.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The value type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// The index type.
    pub fn index_type(&self) -> IndexType {
        self.index
    }

    /// The uniform block describing the call, or an error if it exceeds 32-bit addressing.
    pub(crate) fn desc(&self) -> Result<Desc, GpuError> {
        let too_large = |what, bytes: u64| GpuError::TooLarge {
            what,
            bytes,
            max: u32::MAX.into(),
        };
        let n = self.sequence_len();
        let rows = self.sequences();
        let n32 = u32::try_from(n)
            .ok()
            .filter(|&n| n < u32::MAX)
            .ok_or(too_large("sequence", n as u64))?;
        let rows32 = u32::try_from(rows).map_err(|_| too_large("sequence count", rows as u64))?;
        let outputs = (rows as u64).saturating_mul(self.k as u64);
        if outputs > u32::MAX.into() {
            return Err(too_large("output", outputs));
        }
        let (kind, inf_hi) = shader_kind(self.dtype);
        // Strides and offsets wrap to 32 bits: every final address is below 2^32 (the buffers are
        // checked to be), and wrapping arithmetic is exact modulo 2^32.
        let mut desc = Desc {
            n: n32,
            k: self.k as u32,
            rows: rows32,
            input_offset: self.input.offset as i32,
            input_axis: self.input.strides[self.axis] as i32,
            values_offset: self.values.offset as i32,
            values_axis: self.values.strides[self.axis] as i32,
            indices_offset: self.indices.offset as i32,
            indices_axis: self.indices.strides[self.axis] as i32,
            elem_bytes: self.dtype.size() as u32,
            kind,
            inf_hi,
            flip: u32::from(self.direction == Direction::Decreasing),
            index_words: self.index.size() as u32 / 4,
            ..Desc::zeroed()
        };
        let mut rank = 0;
        for d in 0..MAX_RANK {
            // Dimensions of size 1 add nothing to an address; leaving them out shortens the shader's loop.
            if d == self.axis || self.input.sizes[d] == 1 {
                continue;
            }
            let (q, r) = (rank / 4, rank % 4);
            desc.outer_sizes[q][r] = self.input.sizes[d] as u32;
            desc.input_outer[q][r] = self.input.strides[d] as i32;
            desc.values_outer[q][r] = self.values.strides[d] as i32;
            desc.indices_outer[q][r] = self.indices.strides[d] as i32;
            rank += 1;
        }
        desc.outer_rank = rank as u32;
        Ok(desc)
    }

    /// The dispatches of the call and the scratch entries per row they need; `max_binding` bounds the
    /// threshold filter's candidate lists (a shorter list only overflows sooner).
    pub(crate) fn plan(&self, workgroup: u32, max_binding: u64) -> Result<Plan, GpuError> {
        let too_large = |what| GpuError::TooLarge {
            what,
            bytes: u64::MAX,
            max: u32::MAX.into(),
        };
        let n = self.sequence_len() as u32;
        let k = self.k as u32;
        let rows = self.sequences() as u32;
        let mut plan = Plan {
            steps: Vec::new(),
            scratch_row: 0,
            counter_words: 0,
        };
        let final_tile = |source, src_stride, valid: u32| Step {
            kernel: Kernel::SortTile,
            groups: rows,
            job: Job {
                source,
                sink: 1,
                width: valid.next_power_of_two().max(2),
                chunks: 1,
                src_stride,
                valid,
                stage_first: 2,
                stage_last: valid.next_power_of_two().max(2),
                ..Job::zeroed()
            },
        };
        if n <= TINY_ROW {
            plan.steps.push(Step {
                kernel: Kernel::TinyRows,
                groups: rows.div_ceil(workgroup / n),
                job: Job::zeroed(),
            });
            return Ok(plan);
        }
        if n <= TILE && 2 * k <= SHORT_CANDIDATES {
            plan.steps.push(Step {
                kernel: Kernel::ShortSelect,
                groups: rows,
                job: Job::zeroed(),
            });
            return Ok(plan);
        }
        if n <= TILE {
            plan.steps.push(final_tile(0, n, n));
            return Ok(plan);
        }
        let p = n.checked_next_power_of_two().ok_or(too_large("sequence"))?;
        let q = k.checked_next_power_of_two().ok_or(too_large("K"))?;
        if k > TILE && q == p {
            // K close to n: selecting first would not shorten the sort.
            plan.scratch_row = p;
            sort_rows(&mut plan, rows, 0, n, p, k, workgroup)?;
            return Ok(plan);
        }
        if k <= TILE && u64::from(rows) * FILTER_STATE_WORDS * 4 <= max_binding {
            // Threshold filter: a wide-digit histogram, the bucket of the K-th, the candidates at or
            // below it, and one workgroup per row finishing on them (see the shader). Its 2052 counters
            // a row must fit one binding; many rows of a short type may not, and take the radix select.
            let cap = n.min((4 * TILE).max(n / 16));
            let fits = max_binding / ENTRY_BYTES / u64::from(rows);
            let cap = cap.min(u32::try_from(fits).unwrap_or(u32::MAX));
            plan.scratch_row = cap;
            plan.counter_words = FILTER_STATE_WORDS;
            let chunks = n.div_ceil(FILTER_CHUNK);
            let job = Job {
                chunks,
                width: FILTER_CHUNK,
                dst_stride: cap,
                ..Job::zeroed()
            };
            let groups = [
                (Kernel::FilterHistogram, dispatch_mul(rows, chunks)?),
                (Kernel::FilterPick, rows),
                (Kernel::FilterCandidates, dispatch_mul(rows, n)?.div_ceil(workgroup)),
                (Kernel::FilterFinish, rows),
            ];
            for (kernel, groups) in groups {
                plan.steps.push(Step { kernel, groups, job });
            }
            return Ok(plan);
        }
        // Radix select: the K-th key digit by digit, then the position of the last tie taken, then the
        // K candidates, sorted in one tile or, above TILE, in rows padded to a power of two.
        let stride = if k <= TILE { k } else { q };
        plan.counter_words = RADIX_STATE_WORDS;
        plan.scratch_row = stride;
        let chunk = RADIX_CHUNK;
        let chunks = n.div_ceil(chunk);
        let histogram_groups = dispatch_mul(rows, chunks)?;
        let key_bits = 8 * self.dtype.size() as u32;
        let pos_bits = u32::BITS - (n - 1).leading_zeros();
        for (phase, bits) in [(0, key_bits), (1, pos_bits)] {
            let mut shift = (bits - 1) / 8 * 8;
            loop {
                let job = Job {
                    chunks,
                    width: chunk,
                    phase,
                    shift,
                    ..Job::zeroed()
                };
                plan.steps.push(Step {
                    kernel: Kernel::RadixHistogram,
                    groups: histogram_groups,
                    job,
                });
                plan.steps.push(Step {
                    kernel: Kernel::RadixSelect,
                    groups: rows,
                    job,
                });
                if shift == 0 {
                    break;
                }
                shift -= 8;
            }
        }
        plan.steps.push(Step {
            kernel: Kernel::RadixCompact,
            groups: dispatch_mul(rows, n)?.div_ceil(workgroup),
            job: Job {
                dst_stride: stride,
                ..Job::zeroed()
            },
        });
        if k <= TILE {
            // The tile zeroes the rows' select state first: nothing reads it after.
            let mut last = final_tile(1, k, k);
            last.job.reset = 1;
            plan.steps.push(last);
        } else {
            sort_rows(&mut plan, rows, 1, k, q, k, workgroup)?;
        }
        Ok(plan)
    }
}

/// `a · b`, a dispatch's count of workgroups or of invocations, or an error where it does not fit 32 bits.
fn dispatch_mul(a: u32, b: u32) -> Result<u32, GpuError> {
    a.checked_mul(b).ok_or(GpuError::TooLarge {
        what: "dispatch",
        bytes: u64::from(a) * u64::from(b),
        max: u32::MAX.into(),
    })
}

/// Appends a row-wide bitonic sort of `valid` entries per row, padded to `p` (a power of two above
/// TILE) in the scratch buffer, read from the input (`source` 0) or the scratch buffer (1, rows of `p`),
/// and the pass writing the first `k` of each row.
pub(crate) fn sort_rows(
    plan: &mut Plan,
    rows: u32,
    source: u32,
    valid: u32,
    p: u32,
    k: u32,
    workgroup: u32,
) -> Result<(), GpuError> {
    let chunks = p / TILE;
    let tile_groups = dispatch_mul(rows, chunks)?;
    let tile = |source, valid, stage_first, stage_last| Step {
        kernel: Kernel::SortTile,
        groups: tile_groups,
        job: Job {
            source,
            sink: 0,
            width: TILE,
            chunks,
            src_stride: p,
            valid,
            dst_stride: p,
            stage_first,
            stage_last,
            global_dir: 1,
            ..Job::zeroed()
        },
    };
    // The first pass pads positions at and above `valid` with entries that sort last. After the radix
    // select (source 1), it also zeroes the rows' select state: nothing reads it after.
    let mut first = tile(source, valid, 2, TILE);
    first.job.reset = source;
    plan.steps.push(first);
    let mut stage = 2 * TILE;
    while stage <= p {
        let mut j = stage / 2;
        while j >= TILE {
            plan.steps.push(Step {
                kernel: Kernel::BitonicStep,
                groups: dispatch_mul(rows, p / 2)?.div_ceil(workgroup),
                job: Job {
                    dst_stride: p,
                    j,
                    stage,
                    ..Job::zeroed()
                },
            });
            j /= 2;
        }
        plan.steps.push(tile(1, p, stage, stage));
        stage = stage.saturating_mul(2);
    }
    plan.steps.push(Step {
        kernel: Kernel::WriteSorted,
        groups: dispatch_mul(rows, k)?.div_ceil(workgroup),
        job: Job {
            dst_stride: p,
            ..Job::zeroed()
        },
    });
    Ok(())
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    pub(crate) kernel: Kernel,
    /// Workgroups to dispatch (laid out in 2D when above the per-dimension limit).
    pub(crate) groups: u32,
    pub(crate) job: Job,
}

#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) steps: Vec<Step>,
    /// Entries per row of the scratch buffer.
    pub(crate) scratch_row: u32,
    /// u32 words of per-row counters (radix select or threshold filter state; 0 for none).
    pub(crate) counter_words: u64,
}

impl Plan {
    /// Input elements the plan's kernels read for `rows` rows of `n` with `k` outputs each: every
    /// pass that keys the row reads n, every pass writing outputs reads K (the values are copied from
    /// the input). A radix position digit is counted though it reads nothing when no tie needs it;
    /// `filter_finish` is counted for its K only, though it reads the row again when the candidate
    /// list overflowed.
    pub(crate) fn input_reads(&self, rows: u64, n: u64, k: u64) -> u64 {
        let per_row: u64 = self
            .steps
            .iter()
            .map(|step| match step.kernel {
                Kernel::SortTile => {
                    let keys = if step.job.source == 0 { n } else { 0 };
                    keys + if step.job.sink == 1 { k } else { 0 }
                }
                Kernel::BitonicStep | Kernel::RadixSelect | Kernel::FilterPick => 0,
                Kernel::WriteSorted | Kernel::FilterFinish => k,
                Kernel::RadixHistogram | Kernel::RadixCompact => n,
                Kernel::ShortSelect | Kernel::TinyRows => n + k,
                Kernel::FilterHistogram | Kernel::FilterCandidates => n,
            })
            .sum();
        per_row * rows
    }
}

/// How the shader keys a value type: (kind, the high word of +inf's bits), kind 0 unsigned, 1 signed, 2
/// float.
fn shader_kind(dtype: DataType) -> (u32, u32) {
    match dtype {
        DataType::U8 | DataType::U16 | DataType::U32 | DataType::U64 => (0, 0),
        DataType::I8 | DataType::I16 | DataType::I32 | DataType::I64 => (1, 0),
        DataType::F16 => (2, 0x7C00),
        DataType::Bf16 => (2, 0x7F80),
        DataType::F32 => (2, 0x7F80_0000),
        DataType::F64 => (2, 0x7FF0_0000),
    }
}
