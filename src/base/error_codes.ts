// MongoDB's error codes (src/mongo/base/error_codes.yml): only the ones some caller or client
// reacts to. The number and the name travel together in every error reply.
export const ErrorCodes = {
  InternalError: 1,
  BadValue: 2,
  NoSuchKey: 4,
  Unauthorized: 13,
  TypeMismatch: 14,
  Overflow: 15,
  InvalidLength: 16,
  IllegalOperation: 20,
  EmptyArrayOperation: 21,
  InvalidBSON: 22,
  LockTimeout: 24,
  NamespaceNotFound: 26,
  IndexNotFound: 27,
  PathNotViable: 28,
  ConflictingUpdateOperators: 40,
  CursorNotFound: 43,
  NamespaceExists: 48,
  MaxTimeMSExpired: 50,
  DollarPrefixedFieldName: 52,
  InvalidIdField: 53,
  NotSingleValueField: 54,
  CommandNotFound: 59,
  ImmutableField: 66,
  CannotCreateIndex: 67,
  IndexAlreadyExists: 68,
  InvalidOptions: 72,
  InvalidNamespace: 73,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  NotImplemented: 238,
  ShutdownInProgress: 91,
  FailedToParse: 9,
  ConflictingOperationInProgress: 117,
  CommandNotSupported: 115,
  InvalidPipelineOperator: 168,
  UnsupportedOpQueryCommand: 352,
  IllegalOpMsgFlag: 223,
  TooManyDocumentSequences: 233,
  ChecksumMismatch: 288,
  NoQueryExecutionPlans: 291,
  QueryFeatureNotAllowed: 224,
  BSONObjectTooLarge: 10334,
  DuplicateKey: 11000,
  Location16755: 16755,
  Location17419: 17419,
  Location15998: 15998,
  Location31254: 31254,
  Location40352: 40352,
  InvalidIndexSpecificationOption: 197,
  CannotIndexParallelArrays: 171,
  OperationFailed: 96,
  BadHint: 17007,
  FailPointEnabled: 265,
  UnknownError: 8,
  EmptyFieldName: 56,
  Location16746: 16746,
  Location16766: 16766,
} as const;

export type ErrorCodeName = keyof typeof ErrorCodes;

const namesByCode = new Map<number, string>(
  Object.entries(ErrorCodes).map(([name, code]) => [code, name]),
);

export function codeNameOf(code: number): string {
  const name = namesByCode.get(code);
  if (name !== undefined) return name;
  return `Location${code}`;
}
