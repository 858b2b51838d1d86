//! Every shader parses, validates with baseline capabilities only (no f16, no 64-bit integers) and
//! translates to SPIR-V, MSL, HLSL and GLSL with the naga that wgpu uses. Needs no GPU.

use naga::back::{glsl, hlsl, msl, spv};
use naga::valid::{Capabilities, ValidationFlags, Validator};

const ENTRY_POINTS: [&str; 12] = [
    "sort_tile",
    "bitonic_step",
    "write_sorted",
    "radix_histogram",
    "radix_select",
    "radix_compact",
    "filter_histogram",
    "filter_pick",
    "filter_candidates",
    "filter_finish",
    "short_select",
    "tiny_rows",
];

fn module() -> (naga::Module, naga::valid::ModuleInfo) {
    let module = naga::front::wgsl::parse_str(topk_kernels_gpu::SHADER)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(topk_kernels_gpu::SHADER)));
    // Capabilities::empty(): the shader must not need SHADER_F16, SHADER_INT64 or anything optional.
    let info = Validator::new(ValidationFlags::all(), Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(topk_kernels_gpu::SHADER)));
    (module, info)
}

#[test]
fn shader_validates_with_baseline_capabilities() {
    let (module, _) = module();
    let names: Vec<&str> = module.entry_points.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ENTRY_POINTS);
    for entry in &module.entry_points {
        assert_eq!(entry.stage, naga::ShaderStage::Compute);
    }
    // The workgroup size is the override, and TILE matches the Rust side.
    assert!(topk_kernels_gpu::SHADER.contains("override WORKGROUP: u32 = 256u;"));
    assert!(topk_kernels_gpu::SHADER.contains(&format!("const TILE: u32 = {}u;", topk_kernels_gpu::TILE)));
}

/// The module with its overrides resolved for one entry point, as wgpu does before translating.
fn resolved(entry: &str, workgroup: f64) -> (naga::Module, naga::valid::ModuleInfo) {
    let (module, info) = module();
    let mut constants = naga::back::PipelineConstants::default();
    constants.insert("WORKGROUP".to_string(), workgroup);
    let (module, info) = naga::back::pipeline_constants::process_overrides(
        &module,
        &info,
        Some((naga::ShaderStage::Compute, entry)),
        &constants,
    )
    .unwrap_or_else(|e| panic!("{entry}: {e}"));
    (module.into_owned(), info.into_owned())
}

#[test]
fn translates_to_spirv() {
    for entry in ENTRY_POINTS {
        let (module, info) = resolved(entry, 256.0);
        let pipeline = spv::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: entry.to_string(),
        };
        let words = spv::write_vec(&module, &info, &spv::Options::default(), Some(&pipeline))
            .unwrap_or_else(|e| panic!("{entry}: {e}"));
        assert_eq!(words[0], 0x0723_0203, "SPIR-V magic");
    }
}

#[test]
fn translates_to_msl() {
    for entry in ENTRY_POINTS {
        let (module, info) = resolved(entry, 128.0);
        let options = msl::Options {
            lang_version: (2, 1),
            fake_missing_bindings: true,
            ..Default::default()
        };
        let pipeline = msl::PipelineOptions {
            entry_point: Some((naga::ShaderStage::Compute, entry.to_string())),
            ..Default::default()
        };
        let (source, _) =
            msl::write_string(&module, &info, &options, &pipeline).unwrap_or_else(|e| panic!("{entry}: {e}"));
        assert!(source.contains("kernel void"), "{entry}");
    }
}

#[test]
fn translates_to_hlsl() {
    for entry in ENTRY_POINTS {
        let (module, info) = resolved(entry, 256.0);
        let options = hlsl::Options {
            shader_model: hlsl::ShaderModel::V5_1,
            fake_missing_bindings: true,
            ..Default::default()
        };
        let pipeline = hlsl::PipelineOptions {
            entry_point: Some((naga::ShaderStage::Compute, entry.to_string())),
        };
        let mut source = String::new();
        hlsl::Writer::new(&mut source, &options, &pipeline)
            .write(&module, &info, None)
            .unwrap_or_else(|e| panic!("{entry}: {e}"));
        assert!(source.contains("[numthreads(256, 1, 1)]"), "{entry}");
    }
}

#[test]
fn translates_to_glsl() {
    for entry in ENTRY_POINTS {
        let (module, info) = resolved(entry, 64.0);
        let options = glsl::Options {
            version: glsl::Version::Desktop(430),
            ..Default::default()
        };
        let pipeline = glsl::PipelineOptions {
            shader_stage: naga::ShaderStage::Compute,
            entry_point: entry.to_string(),
            multiview: None,
        };
        let mut source = String::new();
        glsl::Writer::new(
            &mut source,
            &module,
            &info,
            &options,
            &pipeline,
            naga::proc::BoundsCheckPolicies::default(),
        )
        .and_then(|mut w| w.write())
        .unwrap_or_else(|e| panic!("{entry}: {e}"));
        assert!(source.contains("local_size_x = 64"), "{entry}");
    }
}
