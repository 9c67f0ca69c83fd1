/**
 * How each foundation model with an adapter is installed (tools/export/README.md, "Export a real
 * checkpoint"): where its reference checkpoint is on the Hugging Face Hub, which files the export
 * reads, the export environment's requirements file, and the export's own flags.
 */
import type { FoundationName } from '../families/foundation/model-store.ts';

export interface HubCheckpoint {
  /** The reference checkpoint's repository, as the model's card names it. */
  readonly repo: string;
  /** The branch, tag or commit downloaded unless `--revision` names another. */
  readonly revision: string;
  /** The files the export reads; nothing else of the repository is downloaded. */
  readonly files: readonly string[];
}

export interface ExportRecipe {
  /** Null where the checkpoint is not on the Hub: then `hubMissing` says where it is. */
  readonly hub: HubCheckpoint | null;
  readonly hubMissing?: string;
  /**
   * What `--checkpoint` of export.py gets inside a checkpoint folder: the folder itself (null), or
   * one file of it (checkpoints that torch.load reads).
   */
  readonly checkpointFile: string | null;
  /** The files a local checkpoint folder must hold, checked before the export starts. */
  readonly requiredFiles: readonly string[];
  /** The export environment: a requirements file of tools/export/ (scripts/ensure-onnx-reference.sh). */
  readonly requirements: string;
  /** The Python version that environment needs, where python3 will not do. */
  readonly python?: string;
  /** export.py's flags for a real checkpoint, as tools/export/README.md gives them. */
  readonly exportArgs: readonly string[];
}

const SAFETENSORS_FOLDER = ['config.json', 'model.safetensors'];

const folderOnHub = (repo: string, requirements: string, exportArgs: readonly string[] = [], python?: string): ExportRecipe => ({
  hub: { repo, revision: 'main', files: SAFETENSORS_FOLDER },
  checkpointFile: null,
  requiredFiles: SAFETENSORS_FOLDER,
  requirements,
  exportArgs,
  ...(python && { python }),
});

/** A checkpoint of one file on the Hub, handed to export.py as that file. */
const fileOnHub = (repo: string, file: string, requirements: string, exportArgs: readonly string[] = []): ExportRecipe => ({
  hub: { repo, revision: 'main', files: [file] },
  checkpointFile: file,
  requiredFiles: [file],
  requirements,
  exportArgs,
});

export const EXPORT_RECIPES: Record<FoundationName, ExportRecipe> = {
  'chronos-2': folderOnHub('amazon/chronos-2', 'requirements.txt'),
  'timesfm-2p5': fileOnHub('google/timesfm-2.5-200m-pytorch', 'model.safetensors', 'requirements.txt', ['--max-context', '1024']),
  'timesfm-2': fileOnHub('google/timesfm-2.0-500m-pytorch', 'torch_model.ckpt', 'requirements-timesfm2.txt', ['--max-context', '2048']),
  'moirai-2': folderOnHub('Salesforce/moirai-2.0-R-small', 'requirements-moirai.txt', ['--max-context', '1680']),
  'moirai-moe': folderOnHub('Salesforce/moirai-moe-1.0-R-small', 'requirements-moirai.txt', ['--max-context', '1680']),
  'patchtst-fm': folderOnHub('ibm-research/patchtst-fm-r1', 'requirements-patchtst-fm.txt'),
  'toto-2': folderOnHub('Datadog/Toto-2.0-22m', 'requirements-toto.txt', ['--max-context', '2048'], '3.12'),
  tirex: fileOnHub('NX-AI/TiRex', 'model.ckpt', 'requirements-tirex.txt'),
  'tirex-2': folderOnHub('NX-AI/TiRex-2', 'requirements-tirex2.txt'),
  tabicl: fileOnHub('jingang/TabICL', 'tabicl-regressor-v2-20260212.ckpt', 'requirements-tabicl.txt'),
  'tabpfn-ts': fileOnHub('Prior-Labs/TabPFN-v2-reg', 'tabpfn-v2-regressor-2noar4o2.ckpt', 'requirements-tabpfn-ts.txt'),
  reverso: {
    hub: null,
    hubMissing:
      'reverso\'s checkpoint is not on the Hugging Face Hub: it is checkpoints/reverso_small/ of github.com/shinfxh/reverso (a Git LFS file); clone it, then install with --checkpoint <that folder>. Its export environment also needs the repository\'s snapshot (tools/export/README.md, "Reverso")',
    checkpointFile: null,
    requiredFiles: ['checkpoint.pth', 'args.json'],
    requirements: 'requirements-reverso.txt',
    exportArgs: [],
  },
};
