//! An adapter, its device and queue, found the blocking way.

use std::sync::Arc;

use crate::error::GpuError;

/// An adapter, its device and queue: the blocking helper for tests and the command line.
#[derive(Debug)]
pub struct Gpu {
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device (with the adapter's limits, and timestamp queries where the adapter has them).
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
}

impl Gpu {
    /// The first adapter wgpu finds (environment variables such as `WGPU_BACKEND` and
    /// `WGPU_ADAPTER_NAME` are honoured), blocking.
    pub fn new() -> Result<Gpu, GpuError> {
        pollster::block_on(Gpu::new_async())
    }

    /// [`Gpu::new`], as a future.
    pub async fn new_async() -> Result<Gpu, GpuError> {
        if wgpu::Instance::enabled_backend_features().is_empty() {
            return Err(GpuError::NoAdapter(
                "no wgpu backend compiled in for this target".into(),
            ));
        }
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("topk-kernels-gpu"),
                required_features: adapter.features() & wanted,
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        // wgpu's default handler panics on an error outside an error scope; this crate reports errors
        // through scopes (`run_host`) and checks requests up front (`record`), so only report here.
        device.on_uncaptured_error(Arc::new(|e| eprintln!("topk-kernels-gpu: uncaptured wgpu error: {e}")));
        Ok(Gpu { adapter, device, queue })
    }

    /// The adapter's name (e.g. `llvmpipe (LLVM 15.0.6, 256 bits)` for lavapipe).
    pub fn name(&self) -> String {
        let info = self.adapter.get_info();
        format!("{} ({:?}, {})", info.name, info.backend, info.driver_info)
    }
}
