/** Types generated for queries found in "src/plans/plans.repository.ts" */
export type NumberOrString = number | string;

/** 'InsertPlan' parameters type */
export interface IInsertPlanParams {
  amount: NumberOrString;
  at: Date | string;
  description?: string | null | void;
  id: string;
  interval_seconds: number;
  label: string;
  merchant_id: string;
  meter_cap?: NumberOrString | null | void;
  meter_included_units?: NumberOrString | null | void;
  meter_name?: string | null | void;
  meter_unit_price?: NumberOrString | null | void;
  meter_unit_size?: NumberOrString | null | void;
  mint: string;
  onchain_address?: string | null | void;
  onchain_plan_id: string;
  usage_grace_seconds: number;
}

/** 'InsertPlan' return type */
export interface IInsertPlanResult {
  active: boolean;
  amount: string;
  created_at: string;
  description: string | null;
  id: string;
  interval_seconds: number;
  label: string;
  merchant_id: string;
  meter_cap: string | null;
  meter_included_units: string | null;
  meter_name: string | null;
  meter_unit_price: string | null;
  meter_unit_size: string | null;
  mint: string;
  onchain_address: string | null;
  onchain_plan_id: string;
  updated_at: string;
  usage_grace_seconds: number;
}

/** 'InsertPlan' query type */
export interface IInsertPlanQuery {
  params: IInsertPlanParams;
  result: IInsertPlanResult;
}

/** 'ListPlans' parameters type */
export interface IListPlansParams {
  merchantId: string;
}

/** 'ListPlans' return type */
export interface IListPlansResult {
  active: boolean;
  amount: string;
  created_at: string;
  description: string | null;
  id: string;
  interval_seconds: number;
  label: string;
  merchant_id: string;
  meter_cap: string | null;
  meter_included_units: string | null;
  meter_name: string | null;
  meter_unit_price: string | null;
  meter_unit_size: string | null;
  mint: string;
  onchain_address: string | null;
  onchain_plan_id: string;
  subscriptions: number;
  updated_at: string;
  usage_grace_seconds: number;
}

/** 'ListPlans' query type */
export interface IListPlansQuery {
  params: IListPlansParams;
  result: IListPlansResult;
}

/** 'ListPlansPage' parameters type */
export interface IListPlansPageParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
}

/** 'ListPlansPage' return type */
export interface IListPlansPageResult {
  active: boolean;
  amount: string;
  created_at: string;
  description: string | null;
  id: string;
  interval_seconds: number;
  label: string;
  merchant_id: string;
  meter_cap: string | null;
  meter_included_units: string | null;
  meter_name: string | null;
  meter_unit_price: string | null;
  meter_unit_size: string | null;
  mint: string;
  onchain_address: string | null;
  onchain_plan_id: string;
  subscriptions: number;
  updated_at: string;
  usage_grace_seconds: number;
}

/** 'ListPlansPage' query type */
export interface IListPlansPageQuery {
  params: IListPlansPageParams;
  result: IListPlansPageResult;
}

/** 'PlanCreatedAt' parameters type */
export interface IPlanCreatedAtParams {
  id: string;
  merchantId: string;
}

/** 'PlanCreatedAt' return type */
export interface IPlanCreatedAtResult {
  created_at: string;
}

/** 'PlanCreatedAt' query type */
export interface IPlanCreatedAtQuery {
  params: IPlanCreatedAtParams;
  result: IPlanCreatedAtResult;
}

/** 'FindPlan' parameters type */
export interface IFindPlanParams {
  id: string;
  merchantId: string;
}

/** 'FindPlan' return type */
export interface IFindPlanResult {
  active: boolean;
  amount: string;
  created_at: string;
  description: string | null;
  id: string;
  interval_seconds: number;
  label: string;
  merchant_id: string;
  meter_cap: string | null;
  meter_included_units: string | null;
  meter_name: string | null;
  meter_unit_price: string | null;
  meter_unit_size: string | null;
  mint: string;
  onchain_address: string | null;
  onchain_plan_id: string;
  updated_at: string;
  usage_grace_seconds: number;
}

/** 'FindPlan' query type */
export interface IFindPlanQuery {
  params: IFindPlanParams;
  result: IFindPlanResult;
}

/** 'UpdatePlan' parameters type */
export interface IUpdatePlanParams {
  active?: boolean | null | void;
  at: Date | string;
  description?: string | null | void;
  id: string;
  label?: string | null | void;
  merchantId: string;
  setDescription: boolean;
}

/** 'UpdatePlan' return type */
export interface IUpdatePlanResult {
  active: boolean;
  amount: string;
  created_at: string;
  description: string | null;
  id: string;
  interval_seconds: number;
  label: string;
  merchant_id: string;
  meter_cap: string | null;
  meter_included_units: string | null;
  meter_name: string | null;
  meter_unit_price: string | null;
  meter_unit_size: string | null;
  mint: string;
  onchain_address: string | null;
  onchain_plan_id: string;
  updated_at: string;
  usage_grace_seconds: number;
}

/** 'UpdatePlan' query type */
export interface IUpdatePlanQuery {
  params: IUpdatePlanParams;
  result: IUpdatePlanResult;
}

/** 'PlanDescription' parameters type */
export interface IPlanDescriptionParams {
  id: string;
}

/** 'PlanDescription' return type */
export interface IPlanDescriptionResult {
  description: string | null;
}

/** 'PlanDescription' query type */
export interface IPlanDescriptionQuery {
  params: IPlanDescriptionParams;
  result: IPlanDescriptionResult;
}

