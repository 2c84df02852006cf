package access

// Code says why a user may not do something to a directory (Denial.Code), or what a report
// concluded (Report.Code). commands/render_access.go words each with the fields its doc
// comment names.
type Code string

// Why a directory denies what was wanted: Denial.Code. Want is always the permissions wanted
// (PermRead|PermWrite|PermExec).
const (
	// DeniedReadOnlyMount: its filesystem is mounted read-only.
	DeniedReadOnlyMount Code = "read_only_mount"
	// DeniedImmutable: it is immutable (chattr +i).
	DeniedImmutable Code = "immutable"
	// DeniedOwnerBits: the user owns it and the owner bits (Perm) lack some of Want.
	DeniedOwnerBits Code = "owner_bits"
	// DeniedGroupBits: the user is in its group (Group) and the group bits (Perm) lack some
	// of Want.
	DeniedGroupBits Code = "group_bits"
	// DeniedOtherBits: the user is neither the owner nor in the group (Group), and the other
	// bits (Perm) lack some of Want.
	DeniedOtherBits Code = "other_bits"
	// DeniedACLEntry: the POSIX ACL entry naming the user or a group (Entry: "user:185:",
	// "group::"; Perm: its bits; Mask when Masked) lacks some of Want.
	DeniedACLEntry Code = "acl_entry"
	// DeniedACLGroups: the ACL entries of the user's groups lack Want, and other:: is not
	// consulted for a member of a named group.
	DeniedACLGroups Code = "acl_groups"
	// DeniedACLOther: no ACL entry names the user or its groups, and other:: (Perm) lacks
	// some of Want.
	DeniedACLOther Code = "acl_other"
	// DeniedACLNoOther: the ACL has no other:: entry.
	DeniedACLNoOther Code = "acl_no_other"
	// DeniedObjectEntry: the ADLS ACL entry naming the principal or a group (Entry:
	// "user:<object id>:", or "" for an owning or named group's; Perm: its bits; Mask when
	// Masked) lacks some of Want.
	DeniedObjectEntry Code = "object_entry"
	// DeniedObjectOther: no ADLS ACL entry names the principal, and other:: (Perm) lacks some
	// of Want; GroupsLack: its groups' entries lack Want too.
	DeniedObjectOther Code = "object_other"
	// UnknownUnlessGroup: other:: (Perm) allows it unless the principal is a member of one of
	// Entries (Group: the owning group), whose entries lack Want; group memberships cannot be
	// seen.
	UnknownUnlessGroup Code = "unless_group"
	// UnknownOnlyGroup: other:: (Perm) lacks some of Want; only membership of one of Entries
	// (Group: the owning group) would allow it, and group memberships cannot be seen.
	UnknownOnlyGroup Code = "only_group"
	// DeniedUnreachable: a directory above it (Path) cannot be searched.
	DeniedUnreachable Code = "unreachable"
)

// What a report concluded: Report.Code. An empty Code is a report from an earlier version,
// whose Reason (or Err) holds its words.
const (
	// ReportWritable: the user may create files in every directory of Dirs.
	ReportWritable Code = "writable"
	// ReportNotWritable: the user may not create files in the Dirs that are not Writable
	// (each with its Denied); ByACLs: judged by ADLS ACLs, which an Azure RBAC role may
	// override.
	ReportNotWritable Code = "not_writable"
	// ReportUnreachable: the user may not search Blocked (BlockedWhy), above Location.
	ReportUnreachable Code = "unreachable"
	// ReportGCSWritable: Identity may create and delete objects in Bucket.
	ReportGCSWritable Code = "gcs_writable"
	// ReportGCSMissing: Identity lacks the Missing permissions in Bucket.
	ReportGCSMissing Code = "gcs_missing"

	// The reports that are no judgment (Judged is false).

	// NotJudgedObjectStore: an object store's access (Location) cannot be judged without
	// writing.
	NotJudgedObjectStore Code = "object_store"
	// NotJudgedWasbs: a wasbs:// container (Location) has no ACLs.
	NotJudgedWasbs Code = "wasbs"
	// NotJudgedNoPrincipal: ADLS ACLs (Location) are judged for job_user's principal, which is
	// not set.
	NotJudgedNoPrincipal Code = "no_principal"
	// NotJudgedIAMUnanswered: the bucket's testIamPermissions (Bucket) did not answer (Cause:
	// the error's message).
	NotJudgedIAMUnanswered Code = "iam_unanswered"
	// NotJudgedReachByGroups: whether the user may reach Location depends on its groups at
	// Blocked (BlockedWhy).
	NotJudgedReachByGroups Code = "reach_by_groups"
	// NotJudgedCreateByGroups: whether the user may create files in Blocked depends on its
	// groups (BlockedWhy).
	NotJudgedCreateByGroups Code = "create_by_groups"
)

// notJudged are the codes of reports that are no judgment.
var notJudged = map[Code]bool{NotJudgedObjectStore: true, NotJudgedWasbs: true, NotJudgedNoPrincipal: true,
	NotJudgedIAMUnanswered: true, NotJudgedReachByGroups: true, NotJudgedCreateByGroups: true}

// Denial is why a directory denies a user what it wanted, as a code and the values its words
// need.
type Denial struct {
	Code    Code     `json:"code"`
	Want    int      `json:"want,omitempty"`
	Perm    int      `json:"perm,omitempty"` // the bits of the mode or entry consulted
	Have    int      `json:"have,omitempty"` // the bits in effect (Perm, limited by a mask)
	Mask    int      `json:"mask,omitempty"`
	Masked  bool     `json:"masked,omitempty"`
	Entry   string   `json:"entry,omitempty"`
	Entries []string `json:"entries,omitempty"`
	Group   string   `json:"group,omitempty"`
	Path    string   `json:"path,omitempty"`
	// GroupsLack: DeniedObjectOther.
	GroupsLack bool `json:"groups_lack,omitempty"`
}
