//! The kernels' pipelines, and recording and running a request with them.

use std::sync::{Mutex, mpsc};

use bytemuck::Pod;
use topk_kernels::{Direction, Element, Index, Operand, View};
use wgpu::util::DeviceExt;

use crate::error::GpuError;
use crate::host::HostViewMut;
use crate::request::{Plan, Request};
use crate::shader::*;

/// The kernels' pipelines, built once per device.
#[derive(Debug)]
pub struct TopKGpu {
    layout: wgpu::BindGroupLayout,
    sort_tile: wgpu::ComputePipeline,
    bitonic_step: wgpu::ComputePipeline,
    write_sorted: wgpu::ComputePipeline,
    radix_histogram: wgpu::ComputePipeline,
    radix_select: wgpu::ComputePipeline,
    radix_compact: wgpu::ComputePipeline,
    filter_histogram: wgpu::ComputePipeline,
    filter_pick: wgpu::ComputePipeline,
    filter_candidates: wgpu::ComputePipeline,
    filter_finish: wgpu::ComputePipeline,
    short_select: wgpu::ComputePipeline,
    tiny_rows: wgpu::ComputePipeline,
    max_binding: u64,
    max_groups: u32,
    workgroup: u32,
    /// Scratch and counters shared by every call, grown on demand, and the bind groups of recent calls.
    workspace: Mutex<Workspace>,
}

/// Bind groups kept for calls seen recently.
const CACHED_CALLS: usize = 8;

/// What calls reuse: the scratch and counters buffers (on `device`; the kernels leave the counters
/// zero after each call) and, per recent (request, input, values, indices), the uniforms and the bind
/// group over them.
#[derive(Debug, Default)]
struct Workspace {
    device: Option<wgpu::Device>,
    scratch: Option<wgpu::Buffer>,
    counters: Option<wgpu::Buffer>,
    /// The position phase's indirect arguments (zero between calls), and the stand-in bound in their
    /// place for the indirect dispatches.
    args: Option<[wgpu::Buffer; 2]>,
    calls: Vec<CachedCall>,
}

#[derive(Debug)]
struct CachedCall {
    request: Request,
    buffers: [wgpu::Buffer; 3],
    bind_groups: [wgpu::BindGroup; 2],
}

impl TopKGpu {
    /// Compiles the shader and builds the pipelines. Checks the device's limits first.
    pub fn new(device: &wgpu::Device) -> Result<TopKGpu, GpuError> {
        TopKGpu::with_workgroup_size(device, DEFAULT_WORKGROUP)
    }

    /// [`TopKGpu::new`] with the shader's `WORKGROUP` override set to `workgroup` invocations, a power
    /// of two from 32 to `TILE / 2` (the default, 256, suits most GPUs; 64 or 128 may suit small ones).
    pub fn with_workgroup_size(device: &wgpu::Device, workgroup: u32) -> Result<TopKGpu, GpuError> {
        if !workgroup.is_power_of_two() || !(32..=TILE / 2).contains(&workgroup) {
            return Err(GpuError::Limits {
                limit: "workgroup size (a power of two from 32 to 512)",
                needed: 32,
                available: workgroup.into(),
            });
        }
        let limits = device.limits();
        let checks: [(&'static str, u64, u64); 6] = [
            (
                "max_compute_workgroup_storage_size",
                WORKGROUP_BYTES.into(),
                limits.max_compute_workgroup_storage_size.into(),
            ),
            (
                "max_compute_invocations_per_workgroup",
                workgroup.into(),
                limits.max_compute_invocations_per_workgroup.into(),
            ),
            (
                "max_compute_workgroup_size_x",
                workgroup.into(),
                limits.max_compute_workgroup_size_x.into(),
            ),
            (
                "max_storage_buffers_per_shader_stage",
                6,
                limits.max_storage_buffers_per_shader_stage.into(),
            ),
            (
                "max_uniform_buffers_per_shader_stage",
                2,
                limits.max_uniform_buffers_per_shader_stage.into(),
            ),
            (
                "max_dynamic_uniform_buffers_per_pipeline_layout",
                1,
                limits.max_dynamic_uniform_buffers_per_pipeline_layout.into(),
            ),
        ];
        for (limit, needed, available) in checks {
            if available < needed {
                return Err(GpuError::Limits {
                    limit,
                    needed,
                    available,
                });
            }
        }
        if u64::from(limits.min_uniform_buffer_offset_alignment) > JOB_SLOT {
            return Err(GpuError::Limits {
                limit: "min_uniform_buffer_offset_alignment",
                needed: JOB_SLOT,
                available: limits.min_uniform_buffer_offset_alignment.into(),
            });
        }
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("topk.wgsl"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let entry = |binding, ty, dynamic| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: dynamic,
                min_binding_size: None,
            },
            count: None,
        };
        let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("topk"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform, false),
                entry(1, wgpu::BufferBindingType::Uniform, true),
                entry(2, storage(true), false),
                entry(3, storage(false), false),
                entry(4, storage(false), false),
                entry(5, storage(false), false),
                entry(6, storage(false), false),
                entry(7, storage(false), false),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("topk"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = |entry_point| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry_point),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &[("WORKGROUP", f64::from(workgroup))],
                    // Every workgroup variable is written before it is read.
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            })
        };
        let sort_tile = pipeline("sort_tile");
        let bitonic_step = pipeline("bitonic_step");
        let write_sorted = pipeline("write_sorted");
        let radix_histogram = pipeline("radix_histogram");
        let radix_select = pipeline("radix_select");
        let radix_compact = pipeline("radix_compact");
        let filter_histogram = pipeline("filter_histogram");
        let filter_pick = pipeline("filter_pick");
        let filter_candidates = pipeline("filter_candidates");
        let filter_finish = pipeline("filter_finish");
        let short_select = pipeline("short_select");
        let tiny_rows = pipeline("tiny_rows");
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        Ok(TopKGpu {
            layout,
            sort_tile,
            bitonic_step,
            write_sorted,
            radix_histogram,
            radix_select,
            radix_compact,
            filter_histogram,
            filter_pick,
            filter_candidates,
            filter_finish,
            short_select,
            tiny_rows,
            max_binding: limits
                .max_storage_buffer_binding_size
                .min(limits.max_buffer_size)
                .min(u32::MAX.into()),
            max_groups: limits.max_compute_workgroups_per_dimension,
            workgroup,
            workspace: Mutex::new(Workspace::default()),
        })
    }

    /// Records the kernels for `request` into `encoder`; never submits.
    ///
    /// `input`, `values` and `indices` are three distinct buffers with `STORAGE` usage, each bound
    /// whole; the request's layouts address them in elements from their start, and are checked
    /// against their sizes here. The scratch and counters buffers are this `TopKGpu`'s, shared by every
    /// call and grown when a call needs more (the kernels leave the counters zero, so calls run in any
    /// order of submission); the uniforms and bind group of the 8 most recent (request, buffers) are
    /// reused, which keeps those buffers alive until pushed out. Sub-word values are written with atomic read-modify-write, so bytes of
    /// the values buffer outside the view keep their contents. Nothing is recorded on error.
    pub fn record(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        request: &Request,
        input: &wgpu::Buffer,
        values: &wgpu::Buffer,
        indices: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        self.record_call(device, encoder, request, [input, values, indices], true)
    }

    /// [`TopKGpu::record`]; `keep` caches the call's bind groups (not for buffers made for one call).
    fn record_call(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        request: &Request,
        [input, values, indices]: [&wgpu::Buffer; 3],
        keep: bool,
    ) -> Result<(), GpuError> {
        let desc = request.desc()?;
        if request.sequences() == 0 {
            return Ok(());
        }
        if input == values || input == indices || values == indices {
            return Err(GpuError::Buffer {
                tensor: if input == values || input == indices {
                    Operand::Input
                } else {
                    Operand::Values
                },
                problem: "is also bound as another tensor; the three buffers must be distinct",
            });
        }
        let tensors = [
            (Operand::Input, input, &request.input, request.dtype.size() as u32),
            (Operand::Values, values, &request.values, request.dtype.size() as u32),
            (Operand::Indices, indices, &request.indices, request.index.size() as u32),
        ];
        for (tensor, buffer, layout, bytes) in tensors {
            if !buffer.usage().contains(wgpu::BufferUsages::STORAGE) {
                return Err(GpuError::Buffer {
                    tensor,
                    problem: "lacks STORAGE usage",
                });
            }
            if buffer.size() % 4 != 0 {
                return Err(GpuError::Buffer {
                    tensor,
                    problem: "size is not a multiple of 4 bytes",
                });
            }
            if buffer.size() > self.max_binding {
                return Err(GpuError::TooLarge {
                    what: "tensor buffer",
                    bytes: buffer.size(),
                    max: self.max_binding,
                });
            }
            layout.check_fits(tensor, (buffer.size() / u64::from(bytes)) as usize)?;
        }
        let mut plan = request.plan(self.workgroup, self.max_binding)?;
        let rows = u64::from(desc.rows);
        let scratch_bytes = (rows * u64::from(plan.scratch_row) * ENTRY_BYTES).max(ENTRY_BYTES);
        let counters_bytes = (rows * plan.counter_words * 4).max(4);
        for bytes in [scratch_bytes, counters_bytes] {
            if bytes > self.max_binding {
                return Err(GpuError::TooLarge {
                    what: "scratch buffer",
                    bytes,
                    max: self.max_binding,
                });
            }
        }
        let mut grids = Vec::with_capacity(plan.steps.len());
        for step in &plan.steps {
            grids.push(self.grid(step.groups)?);
        }
        // The radix select's position phase runs from indirect arguments that its last key digit's
        // select writes when a tie needs it: that step carries the phase's two grids.
        let position_grid = |kernel| {
            plan.steps
                .iter()
                .zip(&grids)
                .find(|(step, _)| step.kernel == kernel && step.job.phase == 1)
                .map(|(_, &grid)| grid)
        };
        if let (Some(histogram), Some(select)) = (
            position_grid(Kernel::RadixHistogram),
            position_grid(Kernel::RadixSelect),
        ) {
            for step in &mut plan.steps {
                if step.kernel == Kernel::RadixSelect && step.job.phase == 0 && step.job.shift == 0 {
                    (step.job.j, step.job.stage) = histogram;
                    (step.job.stage_first, step.job.stage_last) = select;
                }
            }
        }
        let (bind_group, indirect_group, args) = self.bind_group(
            device,
            request,
            &desc,
            &plan,
            [input, values, indices],
            [scratch_bytes, counters_bytes],
            keep,
        );
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("topk"),
            timestamp_writes: None,
        });
        for (slot, (step, (x, y))) in plan.steps.iter().zip(grids).enumerate() {
            let offset = [(slot as u64 * JOB_SLOT) as u32];
            let indirect = step.job.phase == 1 && matches!(step.kernel, Kernel::RadixHistogram | Kernel::RadixSelect);
            pass.set_pipeline(match step.kernel {
                Kernel::SortTile => &self.sort_tile,
                Kernel::BitonicStep => &self.bitonic_step,
                Kernel::WriteSorted => &self.write_sorted,
                Kernel::RadixHistogram => &self.radix_histogram,
                Kernel::RadixSelect => &self.radix_select,
                Kernel::RadixCompact => &self.radix_compact,
                Kernel::FilterHistogram => &self.filter_histogram,
                Kernel::FilterPick => &self.filter_pick,
                Kernel::FilterCandidates => &self.filter_candidates,
                Kernel::FilterFinish => &self.filter_finish,
                Kernel::ShortSelect => &self.short_select,
                Kernel::TinyRows => &self.tiny_rows,
            });
            if indirect {
                // A buffer may not be both the indirect arguments and a storage binding of one
                // dispatch: these bind a stand-in at the arguments' binding.
                pass.set_bind_group(0, &indirect_group, &offset);
                let args_offset = if step.kernel == Kernel::RadixHistogram { 0 } else { 12 };
                pass.dispatch_workgroups_indirect(&args, args_offset);
            } else {
                pass.set_bind_group(0, &bind_group, &offset);
                pass.dispatch_workgroups(x, y, 1);
            }
        }
        Ok(())
    }

    /// Lowers the largest binding this `TopKGpu` plans for (tensors, scratch, counters) to `bytes`:
    /// for tests of the paths chosen when a device's limit is small.
    #[doc(hidden)]
    pub fn limit_binding_for_tests(&mut self, bytes: u64) {
        self.max_binding = self.max_binding.min(bytes);
    }

    /// The bind groups of a call (with the indirect arguments bound, and with a stand-in there for the
    /// indirect dispatches) and the arguments buffer: cached for a recent (request, buffers), else built
    /// over the shared workspace (grown first if too small, which drops the cached bind groups over the
    /// old one) and new uniforms.
    #[allow(clippy::too_many_arguments)] // one call's parts, each used once
    fn bind_group(
        &self,
        device: &wgpu::Device,
        request: &Request,
        desc: &Desc,
        plan: &Plan,
        buffers: [&wgpu::Buffer; 3],
        [scratch_bytes, counters_bytes]: [u64; 2],
        keep: bool,
    ) -> (wgpu::BindGroup, wgpu::BindGroup, wgpu::Buffer) {
        // A panic elsewhere while the lock was held leaves nothing half-done that matters here.
        let mut ws = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        if ws.device.as_ref() != Some(device) {
            *ws = Workspace {
                device: Some(device.clone()),
                ..Workspace::default()
            };
        }
        let grow = |buffer: &mut Option<wgpu::Buffer>, label, size: u64| {
            if buffer.as_ref().is_some_and(|b| b.size() >= size) {
                return false;
            }
            // New buffers are zeroed, which is the counters' state between calls.
            *buffer = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            }));
            true
        };
        let grown_scratch = grow(&mut ws.scratch, "topk scratch", scratch_bytes);
        let grown_counters = grow(&mut ws.counters, "topk counters", counters_bytes);
        if grown_scratch || grown_counters {
            ws.calls.clear();
        }
        let args = ws
            .args
            .get_or_insert_with(|| {
                let buffer = |label, usage| {
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(label),
                        size: 24,
                        usage,
                        mapped_at_creation: false,
                    })
                };
                [
                    buffer(
                        "topk indirect arguments",
                        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT,
                    ),
                    buffer("topk indirect arguments' stand-in", wgpu::BufferUsages::STORAGE),
                ]
            })
            .clone();
        if let Some(i) = ws
            .calls
            .iter()
            .position(|c| c.request == *request && c.buffers.iter().zip(buffers).all(|(a, b)| a == b))
        {
            let call = ws.calls.remove(i);
            let [main, indirect] = call.bind_groups.clone();
            ws.calls.push(call);
            return (main, indirect, args[0].clone());
        }
        let desc_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("topk desc"),
            contents: bytemuck::bytes_of(desc),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let mut jobs = vec![0u8; plan.steps.len() * JOB_SLOT as usize];
        for (slot, step) in jobs.chunks_exact_mut(JOB_SLOT as usize).zip(&plan.steps) {
            slot[..size_of::<Job>()].copy_from_slice(bytemuck::bytes_of(&step.job));
        }
        let job_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("topk jobs"),
            contents: &jobs,
            usage: wgpu::BufferUsages::UNIFORM,
        });
        fn whole(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            }
        }
        let (Some(scratch), Some(counters)) = (&ws.scratch, &ws.counters) else {
            unreachable!("grown above");
        };
        let [input, values, indices] = buffers;
        let bind_group = |args_binding| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("topk"),
                layout: &self.layout,
                entries: &[
                    whole(0, &desc_buffer),
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: &job_buffer,
                            offset: 0,
                            size: wgpu::BufferSize::new(size_of::<Job>() as u64),
                        }),
                    },
                    whole(2, input),
                    whole(3, scratch),
                    whole(4, values),
                    whole(5, indices),
                    whole(6, counters),
                    whole(7, args_binding),
                ],
            })
        };
        let bind_groups = [bind_group(&args[0]), bind_group(&args[1])];
        if !keep {
            let [main, indirect] = bind_groups;
            return (main, indirect, args[0].clone());
        }
        if ws.calls.len() == CACHED_CALLS {
            ws.calls.remove(0);
        }
        ws.calls.push(CachedCall {
            request: request.clone(),
            buffers: buffers.map(wgpu::Buffer::clone),
            bind_groups: bind_groups.clone(),
        });
        let [main, indirect] = bind_groups;
        (main, indirect, args[0].clone())
    }

    /// What [`TopKGpu::record`] would record for `request`: its dispatches and how much of the input
    /// they read, from the plan (no device work).
    pub fn plan_stats(&self, request: &Request) -> Result<PlanStats, GpuError> {
        let desc = request.desc()?;
        if request.sequences() == 0 {
            return Ok(PlanStats {
                dispatches: 0,
                input_elements_read: 0,
                input_elements: 0,
            });
        }
        let plan = request.plan(self.workgroup, self.max_binding)?;
        let (rows, n, k) = (u64::from(desc.rows), u64::from(desc.n), u64::from(desc.k));
        Ok(PlanStats {
            dispatches: plan.steps.len(),
            input_elements_read: plan.input_reads(rows, n, k),
            input_elements: rows * n,
        })
    }

    /// A 2D grid of at least `groups` workgroups within the per-dimension limit.
    fn grid(&self, groups: u32) -> Result<(u32, u32), GpuError> {
        let max = self.max_groups.max(1);
        if groups <= max {
            return Ok((groups, 1));
        }
        let y = groups.div_ceil(max);
        if y > max {
            return Err(GpuError::TooLarge {
                what: "dispatch",
                bytes: groups.into(),
                max: u64::from(max) * u64::from(max),
            });
        }
        Ok((max, y))
    }

    /// The whole operation from host memory to host memory, blocking: uploads the input slice and the
    /// current contents of the output slices, records, submits, waits and copies the outputs back.
    ///
    /// Validation is the CPU crate's; on any error nothing has been written to the output slices.
    #[allow(clippy::too_many_arguments)] // the operator's parameters, as in the CPU crate
    pub fn run_host<T: Element + Pod, I: Index + Pod, const D: usize>(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        input: View<'_, T, D>,
        axis: usize,
        k: usize,
        direction: Direction,
        values: HostViewMut<'_, T, D>,
        indices: HostViewMut<'_, I, D>,
    ) -> Result<(), GpuError> {
        let request = Request::new(
            T::DATA_TYPE,
            I::INDEX_TYPE,
            input.layout(),
            axis,
            k,
            direction,
            values.layout(),
            indices.layout(),
        )?;
        request.desc()?;
        if request.sequences() == 0 {
            return Ok(());
        }
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let input = input.source().ok_or(GpuError::Buffer {
            tensor: Operand::Input,
            problem: "is a view made from raw parts, which has no slice to upload (make it with View::new)",
        })?;
        let result = self.run_host_inner(device, queue, &request, input, values.data, indices.data);
        let memory = pollster::block_on(memory.pop());
        let validation = pollster::block_on(validation.pop());
        if let Some(e) = memory.or(validation) {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        let (values_bytes, indices_bytes) = result?;
        // Everything succeeded: only now touch the caller's slices. The read-backs are the uploaded
        // slices rounded up to whole words, so they are at least as long.
        let values_out: &mut [u8] = bytemuck::cast_slice_mut(values.data);
        let len = values_out.len();
        values_out.copy_from_slice(&values_bytes[..len]);
        let indices_out: &mut [u8] = bytemuck::cast_slice_mut(indices.data);
        let len = indices_out.len();
        indices_out.copy_from_slice(&indices_bytes[..len]);
        Ok(())
    }

    fn run_host_inner<T: Pod, I: Pod>(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        request: &Request,
        input: &[T],
        values: &[T],
        indices: &[I],
    ) -> Result<(Vec<u8>, Vec<u8>), GpuError> {
        let upload = |label, bytes: &[u8], usage| {
            let size = words(bytes.len());
            if size > self.max_binding {
                return Err(GpuError::TooLarge {
                    what: label,
                    bytes: size,
                    max: self.max_binding,
                });
            }
            let mut padded = bytes.to_vec();
            padded.resize(size as usize, 0);
            Ok(device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &padded,
                usage,
            }))
        };
        let output = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let input_buffer = upload("input", bytemuck::cast_slice(input), wgpu::BufferUsages::STORAGE)?;
        let values_buffer = upload("values", bytemuck::cast_slice(values), output)?;
        let indices_buffer = upload("indices", bytemuck::cast_slice(indices), output)?;
        let read_back = |buffer: &wgpu::Buffer| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("topk read-back"),
                size: buffer.size(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let (values_read, indices_read) = (read_back(&values_buffer), read_back(&indices_buffer));
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("topk") });
        // The buffers are this call's own: caching its bind groups would only keep them alive.
        self.record_call(
            device,
            &mut encoder,
            request,
            [&input_buffer, &values_buffer, &indices_buffer],
            false,
        )?;
        encoder.copy_buffer_to_buffer(&values_buffer, 0, &values_read, 0, values_buffer.size());
        encoder.copy_buffer_to_buffer(&indices_buffer, 0, &indices_read, 0, indices_buffer.size());
        queue.submit([encoder.finish()]);
        Ok((read_buffer(device, &values_read)?, read_buffer(device, &indices_read)?))
    }
}

/// The shape of a request's recorded work ([`TopKGpu::plan_stats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanStats {
    /// Compute dispatches recorded.
    pub dispatches: usize,
    /// Input elements the kernels read (see `input_passes`).
    pub input_elements_read: u64,
    /// Elements of the sequences (rows × n).
    pub input_elements: u64,
}

impl PlanStats {
    /// Passes over the input: elements read over elements. Every kernel keying the rows counts one
    /// pass, every kernel writing outputs K / n (it copies the values from the input). Work skipped on
    /// the data is counted as done (the radix path's position digits), and the threshold filter's rescan
    /// of a row whose candidate list overflowed is not counted.
    pub fn input_passes(&self) -> f64 {
        if self.input_elements == 0 {
            0.0
        } else {
            self.input_elements_read as f64 / self.input_elements as f64
        }
    }
}

/// `bytes` rounded up to whole u32 words, at least one word (a binding may not be empty).
pub(crate) fn words(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4).max(1) * 4
}

/// Maps a `MAP_READ` buffer, waits, and copies its contents out.
pub(crate) fn read_buffer(device: &wgpu::Device, buffer: &wgpu::Buffer) -> Result<Vec<u8>, GpuError> {
    let (sender, receiver) = mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |result| {
        // The receiver outlives the poll below; a send error would only mean it is gone.
        let _ = sender.send(result);
    });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| GpuError::Poll(e.to_string()))?;
    match receiver.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(GpuError::Map(e.to_string())),
        Err(_) => return Err(GpuError::Map("the map callback never ran".into())),
    }
    let bytes = buffer
        .get_mapped_range(..)
        .map_err(|e| GpuError::Map(e.to_string()))?
        .to_vec();
    buffer.unmap();
    Ok(bytes)
}
