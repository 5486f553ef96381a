// Operations in the contract whose capability lands in a later issue. They authenticate and
// validate like any other, then answer 501 `not_implemented`; the spec declares that 501 on
// exactly these. When a capability lands, remove its ids here and the 501 from the spec
// (boot refuses the server if the two disagree). This is the only source of 501s.
export const PENDING_OPERATIONS: ReadonlySet<string> = new Set([
  // Generations issue
  'createGeneration',
  'getGeneration',
  'createSlideshow',
  'getSlideshow',
  'createFacelessVideo',
  'getVideo',
  'listReferenceInspirations',
  'createReferenceInspiration',
  // Editor issue
  'listEditorVideos',
  'createEditorVideo',
  'getEditorVideo',
  'applyEditorEdits',
  'applyEditorEditsViaPost',
  'listEditorMedia',
  'uploadEditorMedia',
  'addEditorMedia',
]);
