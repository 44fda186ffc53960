//! What can go wrong finding nvcc or compiling kernels.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitStatus;

/// How to get nvcc, appended to every "not found" message.
const INSTALL_HINT: &str = "nvcc 13.0 is needed to build CUDA kernels (no GPU is needed). \
In a doca-rs checkout, scripts/setup installs the pinned nvcc wheels into .tools/; \
elsewhere install the CUDA toolkit, or the PyPI wheels nvidia-cuda-nvcc==13.0.88 \
nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.88 \
nvidia-cuda-cccl==13.0.85, and set NVCC=/path/to/nvcc or CUDA_HOME";

/// An error of this crate; its `Display` says what failed and what to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// nvcc is nowhere in the search order.
    NvccNotFound {
        /// Every path looked at, in order.
        tried: Vec<PathBuf>,
    },
    /// `NVCC` names something that is not a file.
    NvccVarInvalid(PathBuf),
    /// A [`crate::Fatbin`] was compiled without any source file.
    NoSources,
    /// [`crate::Fatbin::doca_includes`] was asked for, but none of
    /// [`crate::DOCA_INCLUDE_VARS`] is set.
    NoDocaIncludes,
    /// No output directory: outside a build script (no `OUT_DIR`) and none given.
    NoOutDir,
    /// A file operation failed.
    Io {
        /// What was being done, with the path.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A program could not be started.
    Spawn {
        /// The program.
        program: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// `DOCA_BUILD_PTX_ISA` (or a [`crate::PtxIsa`] text) is not `MAJOR.MINOR`.
    PtxIsaInvalid(String),
    /// An older-driver build was asked for, but no ptxas was given and the pinned wheel's is
    /// not installed.
    PtxasNotFound {
        /// Every path looked at, in order.
        tried: Vec<PathBuf>,
    },
    /// nvcc's PTX has no `.version` line, or one older than the ISA asked for.
    PtxVersion {
        /// The line nvcc wrote, if any.
        found: Option<String>,
        /// The ISA asked for.
        wanted: crate::PtxIsa,
    },
    /// The older ptxas refused the lowered PTX: the kernels use an instruction that ISA
    /// lacks.
    Ptxas {
        /// The ISA the PTX was lowered to.
        isa: crate::PtxIsa,
        /// The command line.
        command: String,
        /// Its exit status.
        status: ExitStatus,
        /// What it printed (stderr, then stdout).
        output: String,
    },
    /// Another CUDA tool (`fatbinary`) ran and failed.
    Tool {
        /// The command line.
        command: String,
        /// Its exit status.
        status: ExitStatus,
        /// What it printed (stderr, then stdout).
        output: String,
    },
    /// nvcc ran and failed.
    Nvcc {
        /// The command line.
        command: String,
        /// Its exit status.
        status: ExitStatus,
        /// What it printed (stderr, then stdout).
        output: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NvccNotFound { tried } => {
                let list: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "nvcc was not found (tried NVCC, CUDA_HOME, PATH, the .tools wheels and \
                     /usr/local/cuda: {}).\n{INSTALL_HINT}",
                    list.join(", ")
                )
            }
            Error::NvccVarInvalid(p) => write!(
                f,
                "NVCC={} is not a file: point it at the nvcc executable, or unset it to \
                 search CUDA_HOME and PATH.\n{INSTALL_HINT}",
                p.display()
            ),
            Error::NoSources => write!(f, "no .cu source files were given to compile"),
            Error::NoDocaIncludes => write!(
                f,
                "the DOCA header directories are unknown (neither DEP_DOCA_RS_INCLUDE nor \
                 DEP_DOCA_INCLUDE is set): add `doca` (or `doca-sys`) to [dependencies] of \
                 the package whose build script compiles the kernels (cargo passes their \
                 `links` metadata only to direct dependants), or add the directories with \
                 include()"
            ),
            Error::NoOutDir => write!(
                f,
                "no output directory: OUT_DIR is only set for build scripts; call out_dir()"
            ),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::Spawn { program, source } => {
                write!(f, "running {}: {source}", program.display())
            }
            Error::Nvcc {
                command,
                status,
                output,
            } => write!(f, "nvcc failed ({status}): {command}\n{output}"),
            Error::PtxIsaInvalid(text) => write!(
                f,
                "{text:?} is not a PTX ISA version: {} takes MAJOR.MINOR, e.g. 8.2 for \
                 CUDA 12.2 and newer drivers",
                crate::PTX_ISA_VAR
            ),
            Error::PtxasNotFound { tried } => {
                let list: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "an older-driver build needs a CUDA 12 ptxas: none at {}. Set {} to one \
                     (any CUDA 12.x toolkit's bin/ptxas), run doca-rs's scripts/setup \
                     (installs CUDA 12.2's into .tools/py12), or pip install \
                     nvidia-cuda-nvcc-cu12==12.2.140 and point {} at its ptxas",
                    list.join(", "),
                    crate::PTXAS_VAR,
                    crate::PTXAS_VAR
                )
            }
            Error::PtxVersion { found, wanted } => match found {
                Some(line) => write!(
                    f,
                    "nvcc wrote PTX `{line}`, older than the ISA {wanted} asked for: lower \
                     {} (an ISA is only ever lowered)",
                    crate::PTX_ISA_VAR
                ),
                None => write!(f, "nvcc's PTX has no `.version` line to lower to {wanted}"),
            },
            Error::Ptxas {
                isa,
                command,
                status,
                output,
            } => write!(
                f,
                "ptxas refused the PTX lowered to ISA {isa} ({status}): the kernels use an \
                 instruction ISA {isa} lacks; raise {} (drivers from CUDA {} on run the \
                 result) or drop the instruction.\n{command}\n{output}",
                crate::PTX_ISA_VAR,
                isa.cuda_release().unwrap_or("?")
            ),
            Error::Tool {
                command,
                status,
                output,
            } => write!(f, "{command} failed ({status})\n{output}"),
        }
    }
}

impl Error {
    /// A failed run of nvcc, said as nvcc's failure.
    pub(crate) fn into_nvcc(self) -> Error {
        match self {
            Error::Tool {
                command,
                status,
                output,
            } => Error::Nvcc {
                command,
                status,
                output,
            },
            e => e,
        }
    }

    /// A failed run of the older ptxas, said with the ISA it was given.
    pub(crate) fn into_ptxas(self, isa: crate::PtxIsa) -> Error {
        match self {
            Error::Tool {
                command,
                status,
                output,
            } => Error::Ptxas {
                isa,
                command,
                status,
                output,
            },
            e => e,
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}
